"""Issue 40 (5): an unknown `AGENTRT_*` variable stops the worker, the API and the CLI at
start with one line naming it and the closest valid name. On cf842b3 a misspelt
`AGENTRT_PAYLOAD_KEY` was ignored: the worker ran without payload encryption."""

import os
import re
import uuid
from pathlib import Path

import pytest

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.core.settings_env import (
    DEVELOPMENT_VARIABLES,
    refuse_unknown,
    setting_variables,
)
from tests._entry import assert_one_line, run_module

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = [
    ("agentrt.workers", ("--check",), "agentrt-worker"),
    ("agentrt.api.main", ("serve",), "agentrt-api"),
    ("agentrt.starter.cli", ("status", str(uuid.uuid4())), "agentrt"),
]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("AGENTRT_")}
    # Nothing answers here: an entry point that went on would fail on the connection, not
    # on the variable.
    return env | {
        "AGENTRT_TEMPORAL_ADDRESS": "127.0.0.1:9",
        "AGENTRT_DATABASE_URL": f"sqlite:///{tmp_path / 'none.db'}",
        "AGENTRT_DATA_DIR": str(tmp_path / "data"),
        **extra,
    }


@pytest.mark.parametrize(("module", "args", "prog"), ENTRY_POINTS)
def test_each_entry_point_refuses_a_misspelt_variable_naming_the_right_one(
    tmp_path: Path, module: str, args: tuple[str, ...], prog: str
) -> None:
    env = _env(tmp_path, AGENTRT_PAYLOAD_KEY="p1:" + "A" * 44)
    done = run_module(module, args, env=env, cwd=tmp_path)
    assert_one_line(
        done, prog, "unknown setting AGENTRT_PAYLOAD_KEY", "did you mean AGENTRT_PAYLOAD_KEYS?"
    )
    assert not (tmp_path / "data").exists()  # stopped before anything was made


@pytest.mark.parametrize(("module", "args", "prog"), ENTRY_POINTS)
def test_a_misspelt_variable_in_the_dotenv_file_and_in_lower_case_too(
    tmp_path: Path, module: str, args: tuple[str, ...], prog: str
) -> None:
    (tmp_path / ".env").write_text("AGENTRT_TEMPORAL_ADRESS=temporal:7233\n")
    done = run_module(module, args, env=_env(tmp_path), cwd=tmp_path)
    assert_one_line(done, prog, "AGENTRT_TEMPORAL_ADRESS in", ".env", "AGENTRT_TEMPORAL_ADDRESS?")
    (tmp_path / ".env").unlink()
    done = run_module(module, args, env=_env(tmp_path, agentrt_seal_key="x"), cwd=tmp_path)
    assert_one_line(done, prog, "AGENTRT_SEAL_KEY ", "did you mean AGENTRT_SEAL_KEYS?")


def test_every_setting_of_every_process_is_known_and_nothing_else() -> None:
    environ = dict.fromkeys(setting_variables() | DEVELOPMENT_VARIABLES, "")
    refuse_unknown(environ, None)  # raises nothing
    with pytest.raises(ConfigError, match="unknown setting AGENTRT_NO_SUCH_THING in the env"):
        refuse_unknown(environ | {"AGENTRT_NO_SUCH_THING": "1"}, None)
    # An unknown name like no setting gets no guess.
    with pytest.raises(ConfigError) as err:
        refuse_unknown({"AGENTRT_QQQQ": "1"}, None)
    assert "did you mean" not in str(err.value)
    # Other variables are none of ours.
    refuse_unknown({"PATH": "/bin", "TEMPORAL_ADDRESS": "x", "AGENTRTX": "1"}, None)


def test_the_variables_a_servers_or_providers_file_reads_are_known(tmp_path: Path) -> None:
    mcp = tmp_path / "mcp.yaml"
    mcp.write_text(
        "servers:\n  - {name: crm, transport: http, url: 'http://127.0.0.1:1/mcp',"
        " headers_from_env: {Authorization: AGENTRT_CRM_TOKEN}}\n"
    )
    providers = tmp_path / "providers.yaml"
    providers.write_text(
        "providers:\n  - {name: local, base_url: 'http://127.0.0.1:1/v1',"
        " api_key_env: AGENTRT_LOCAL_KEY}\n"
    )
    settings = Settings().replace(worker={"mcp_servers_file": mcp}, providers={"file": providers})
    environ = {"AGENTRT_CRM_TOKEN": "t", "AGENTRT_LOCAL_KEY": "k"}
    refuse_unknown(environ, None, settings)
    with pytest.raises(ConfigError, match="AGENTRT_CRM_TOKEN"):
        refuse_unknown(environ, None)  # a process without those files does not know them


def test_the_development_variables_are_the_ones_the_tools_read() -> None:
    """The exceptions for `./dev`, the tests and the benchmarks are exactly what they read
    and no setting, so the list cannot grow into a back door."""
    read: set[str] = set()
    pattern = re.compile(r"environ(?:\.get)?\(\s*\"(AGENTRT_\w+)\"|\$\{(AGENTRT_\w+)")
    files = [ROOT / "dev", *ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/**/*.py")]
    for path in files:
        for m in pattern.finditer(path.read_text()):
            read.add(m.group(1) or m.group(2))
    read.discard("AGENTRT_TEST_NOT_PASSED")  # a value a test sets, not one a tool reads
    assert DEVELOPMENT_VARIABLES == read - setting_variables()
    assert not DEVELOPMENT_VARIABLES & setting_variables()
