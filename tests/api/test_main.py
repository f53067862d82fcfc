"""`agentrt-api` as users run it: usage without side effects, and one line naming the
setting when Temporal or the database cannot be reached."""

import os
import subprocess
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests._entry import assert_one_line, run_module
from tests.conftest import TEST_SEAL_KEYS

DEAD_DB = "postgresql+psycopg://nobody@127.0.0.1:1/x?connect_timeout=2"


def _api(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run it with `env` on top of the suite's keys; a variable set to "-" is left unset."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    full = {**clean, "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS, "AGENTRT_API_PORT": "1", **env}
    env = {k: v for k, v in full.items() if v != "-"}
    return run_module("agentrt.api.main", args, env=env, cwd=cwd)


def _one_line(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert_one_line(done, "agentrt-api", *fragments)


def test_help_prints_usage_and_touches_nothing(tmp_path: Path) -> None:
    done = _api(tmp_path, "--help", AGENTRT_TEMPORAL_ADDRESS="127.0.0.1:1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: agentrt-api")
    assert list(tmp_path.iterdir()) == []


def test_serve_with_temporal_down_is_one_line(tmp_path: Path) -> None:
    done = _api(tmp_path, "serve", AGENTRT_TEMPORAL_ADDRESS="127.0.0.1:1")
    _one_line(done, "cannot reach Temporal at 127.0.0.1:1", "AGENTRT_TEMPORAL_ADDRESS")
    assert list(tmp_path.iterdir()) == []


def test_serve_and_purge_with_the_database_down_are_one_line(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    for args in (("serve",), ("purge", "--older-than-days", "1")):
        done = _api(tmp_path, *args, AGENTRT_TEMPORAL_ADDRESS=address, AGENTRT_DATABASE_URL=DEAD_DB)
        _one_line(done, "cannot reach the database", "AGENTRT_DATABASE_URL")


def test_no_seal_key_is_one_line_and_none_is_made(tmp_path: Path) -> None:
    done = _api(tmp_path, "purge", "--older-than-days", "1", AGENTRT_SEAL_KEYS="-")
    _one_line(done, "no seal key: set AGENTRT_SEAL_KEYS", "AGENTRT_DATA_DIR")
    assert list(tmp_path.iterdir()) == []
