"""Issue 40 (5): every code block of the manual (the README and the docs site's pages,
tests/_markdown.py `markdown_files`) runs in a test, or is checked as what it is: on
cf842b3 the README's snippets used a `client` they never made. Python blocks run against a
real dev server and worker unless marked `{.python .compile}` (then compiled, every name bound);
shell blocks pass `bash -n`, name only real settings, and their `agentrt*` commands parse;
YAML blocks load with the worker's own loaders."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agentrt.activities.providers.scripted import load_rules
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.api.main import build_parser as api_parser
from agentrt.core.policies import load_policies
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.core.settings_env import setting_variables
from agentrt.starter.cli import build_parser as cli_parser
from agentrt.workers.main import parse_args as worker_args
from agentrt.workers.providers_file import read_providers_file
from tests._markdown import (
    CodeBlock,
    as_file,
    check_shell,
    code_blocks,
    compiled,
    markdown_files,
    parse_data,
    python_path,
    run_python,
    unbound_names,
    write_module,
    yaml_kind,
)
from tests.conftest import TEST_SEAL_KEYS

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = [b for path in markdown_files(ROOT) for b in code_blocks(path)]
CHECKED = {"python", "bash", "sh", "yaml", "toml", "json"}
# Names a snippet uses for the reader's own systems, inside the functions it shows (a CRM
# client, an invoice lookup): never called when the block runs.
YOURS = {"crm", "lookup"}
LOADERS = {
    "profiles": load_profiles,
    "providers": read_providers_file,
    "policies": load_policies,
    "servers": load_mcp_config,
    "rules": load_rules,
}
PARSERS = {
    "agentrt": cli_parser().parse_args,
    "agentrt-api": api_parser().parse_args,
    "agentrt-worker": worker_args,
}


def _of(*langs: str) -> list[CodeBlock]:
    return [b for b in BLOCKS if b.lang in langs]


def test_every_block_is_one_the_runner_checks() -> None:
    """A block in a language no check knows would pass unchecked: name one of CHECKED, or
    none for laid-out prose (the architecture map, checked by tests/test_architecture.py)."""
    assert len(BLOCKS) >= 20
    unchecked = [str(b) for b in BLOCKS if b.lang and b.lang not in CHECKED]
    assert not unchecked
    assert all(f in ("compile",) for b in _of("python") for f in b.flags)
    assert len([b for b in BLOCKS if not b.lang]) == 1


@pytest.mark.parametrize("block", _of("bash", "sh"), ids=str)
def test_shell_blocks_parse_and_name_real_settings_and_commands(block: CodeBlock) -> None:
    problems = check_shell(block, setting_variables(), PARSERS)
    assert not problems, problems


@pytest.mark.parametrize("block", _of("yaml", "toml", "json"), ids=str)
def test_data_blocks_parse_and_load_as_the_file_they_are(
    block: CodeBlock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = parse_data(block)
    kind = yaml_kind(data) if block.lang == "yaml" else None
    if kind is None:
        return
    path = tmp_path / f"{kind}.yaml"
    path.write_text(yaml.safe_dump(as_file(data, kind)))
    # The variables a servers or providers file reads its secrets from, as a deployment sets.
    for name in ("AGENTRT_FILES_TOKEN", "CRM_AUTHORIZATION", "OPENAI_API_KEY", "PARTNER_TOKEN"):
        monkeypatch.setenv(name, "set")
    LOADERS[kind](path)


@pytest.mark.parametrize("block", _of("python"), ids=str)
def test_python_blocks_compile_and_use_only_names_they_bind(block: CodeBlock) -> None:
    compiled(block)
    unbound = [n for n in unbound_names(block) if n.split()[0] not in YOURS]
    assert not unbound, f"{block} uses names it never binds: {unbound}"


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    """Every `# pkg/mod.py` block of the manual as a file, importable, before any runs."""
    folder = tmp_path / "snippets"
    folder.mkdir()
    for block in _of("python"):
        if block.module is not None:
            write_module(block, folder)
    with python_path(folder):
        yield folder


@pytest.fixture
def deployment(
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    worker: Worker,
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The environment a reader's shell has: AGENTRT_* pointing at a running deployment
    (the dev server, the suite's database, a worker serving tests/fixtures/profiles.yaml)."""
    env = {
        "AGENTRT_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENTRT_DATABASE_URL": settings.database.resolved_url(),
        "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS,
        "AGENTRT_TASK_QUEUE": task_queue,
        "AGENTRT_DATA_DIR": str(tmp_path / "data"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("deployment")
async def test_python_blocks_run_against_a_real_deployment(modules: Path) -> None:
    ran: list[str] = []
    for block in _of("python"):
        if "compile" in block.flags:
            continue
        if block.module is not None:
            __import__(block.module.removesuffix(".py").replace("/", "."))
        else:
            scope: dict[str, Any] = await run_python(block)
            if "view" in scope and hasattr(scope["view"], "status"):
                # The "Using it" walk-through ends with its run settled and approved.
                assert scope["view"].status.value == "COMPLETED", scope["view"]
        ran.append(str(block))
    assert len(ran) >= 6, ran
