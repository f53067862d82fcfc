"""The worker as users run it: `python -m workers`, configured by AGENTRT_* settings."""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._entry import assert_one_line, run_module
from tests.workers._proc import worker_env


def _env(settings: Settings, address: str, queue: str, **extra: str) -> dict[str, str]:
    """The kill tests' worker environment (no fault armed), with `extra` on top."""
    env = worker_env(settings, temporal_address=address, task_queue=queue)
    env.update(extra)
    return env


def _spawn(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agentrt.workers", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def test_sigterm_drains_and_exits_cleanly_after_serving_a_run(
    temporal_env: WorkflowEnvironment, settings: Settings, parts: WorkerResources, tmp_path: Path
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    address = temporal_env.client.service_client.config.target_host
    log = tmp_path / "worker.log"
    # The flag wins over the environment: the run is served only if it polls `queue`.
    proc = _spawn(_env(settings, address, "not-this-queue"), log, "--task-queue", queue)
    try:
        runtime = AgentRuntime(temporal_env.client, RunStore(parts.ctx), queue)
        view = await runtime.run("auto", "what about my order?")
        assert view.status is RunStatus.COMPLETED
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=40) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert "draining" in text and "Traceback" not in text


def _worker(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_module("agentrt.workers", args, env=env, cwd=cwd)


def _one_line(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert_one_line(done, "agentrt-worker", *fragments)


DEAD_DB = "postgresql+psycopg://nobody@127.0.0.1:1/x?connect_timeout=2"


def _fresh_env(settings: Settings, data_dir: Path, address: str) -> dict[str, str]:
    """A first start: no seal keys, SQLite under a data dir that does not exist yet."""
    env = _env(settings, address, "q", AGENTRT_DATABASE_URL="")
    env["AGENTRT_DATA_DIR"] = str(data_dir)
    del env["AGENTRT_SEAL_KEYS"]
    return env


def test_help_prints_usage_and_touches_nothing(no_database: Settings, tmp_path: Path) -> None:
    settings = no_database
    env = _fresh_env(settings, tmp_path / "data", "127.0.0.1:1")
    done = _worker(env, tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: agentrt-worker")
    for option in ("--task-queue", "--check", "AGENTRT_TEMPORAL_ADDRESS", "AGENTRT_DATABASE_URL"):
        assert option in done.stdout
    assert done.stderr == ""
    assert list(tmp_path.iterdir()) == []  # no data dir, no key, no database


@pytest.mark.usefixtures("parts")  # the suite's database, migrated
def test_temporal_down_is_one_line_and_nothing_is_migrated(
    settings: Settings, tmp_path: Path
) -> None:
    dead = "127.0.0.1:1"
    for args in ((), ("--check",)):
        done = _worker(_env(settings, dead, "q"), tmp_path, *args)
        _one_line(done, f"cannot reach Temporal at {dead}", "AGENTRT_TEMPORAL_ADDRESS")


def test_a_first_start_is_refused_until_agentrt_migrate_and_creates_nothing(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    """Issue 42: no worker makes the seal key or the schema; `agentrt migrate` does."""
    address = temporal_env.client.service_client.config.target_host
    for args in ((), ("--check",)):
        done = _worker(_fresh_env(settings, tmp_path / "data", address), tmp_path, *args)
        _one_line(done, "no seal key", "`agentrt migrate`")
        assert not (tmp_path / "data").exists()


def test_a_database_that_is_down_at_start_is_a_clear_error(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    env = _env(settings, address, "q", AGENTRT_DATABASE_URL=DEAD_DB)
    for args in ((), ("--check",)):
        done = _worker(env, tmp_path, *args)
        _one_line(done, "cannot reach the database at", "AGENTRT_DATABASE_URL")


def test_check_reports_what_the_worker_would_meet_and_changes_nothing(
    temporal_env: WorkflowEnvironment, settings: Settings, parts: WorkerResources, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    done = _worker(_env(settings, address, "q"), tmp_path, "--check")
    assert done.returncode == 0, done.stderr
    assert "database " in done.stdout and ": schema at head" in done.stdout
    assert f"temporal: {address} namespace default, task queue q" in done.stdout
    env = _env(settings, address, "q", AGENTRT_TEMPORAL_NAMESPACE="no-such-namespace")
    _one_line(_worker(env, tmp_path, "--check"), "no-such-namespace", "AGENTRT_TEMPORAL_NAMESPACE")


def test_bad_settings_and_flags_are_one_line(no_database: Settings, tmp_path: Path) -> None:
    settings = no_database
    env = _env(settings, "127.0.0.1:1", "q", AGENTRT_MAX_CONCURRENT_ACTIVITIES="many")
    _one_line(_worker(env, tmp_path), "invalid AGENTRT_* settings", "max_concurrent_activities")
    _one_line(_worker(_env(settings, "127.0.0.1:1", "q"), tmp_path, "--task-queue", " "))


def test_fleet_settings_are_one_line_before_any_connection(
    no_database: Settings, tmp_path: Path
) -> None:
    settings = no_database
    dead = "127.0.0.1:1"  # never reached: these fail first
    no_build = _env(settings, dead, "q", AGENTRT_DEPLOYMENT_NAME="agentrt")
    _one_line(
        _worker(no_build, tmp_path), "AGENTRT_DEPLOYMENT_NAME is set without AGENTRT_BUILD_ID"
    )
    bad_role = _env(settings, dead, "q", AGENTRT_SERVE="workflows,gpus")
    _one_line(_worker(bad_role, tmp_path), "AGENTRT_SERVE", "gpus")
    zero_rate = _env(settings, dead, "q", AGENTRT_PROVIDER_RATE_LIMITS="openai=0")
    _one_line(_worker(zero_rate, tmp_path), "AGENTRT_PROVIDER_RATE_LIMITS", "not positive")
