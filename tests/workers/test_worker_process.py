"""The worker as users run it: `python -m workers`, configured by AGENTRT_* settings."""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs import RunStore
from agentrt.workers.compose import Parts


def _env(settings: Settings, address: str, queue: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env.update(
        AGENTRT_DATABASE_URL=extra.pop("AGENTRT_DATABASE_URL", settings.resolved_database_url()),
        AGENTRT_TEMPORAL_ADDRESS=address,
        AGENTRT_TASK_QUEUE=queue,
        AGENTRT_SEAL_KEYS=settings.read_seal_keys(),
        AGENTRT_PROFILES_FILE=str(settings.profiles_file),
        AGENTRT_RULES_FILE=str(settings.rules_file),
        AGENTRT_DATA_DIR=str(settings.data_dir),
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def _spawn(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agentrt.workers"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def test_sigterm_drains_and_exits_cleanly_after_serving_a_run(
    temporal_env: WorkflowEnvironment, settings: Settings, parts: Parts, tmp_path: Path
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    address = temporal_env.client.service_client.config.target_host
    log = tmp_path / "worker.log"
    proc = _spawn(_env(settings, address, queue), log)
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


def test_a_database_that_is_down_at_start_is_a_clear_error(
    settings: Settings, tmp_path: Path
) -> None:
    env = _env(
        settings,
        "127.0.0.1:1",
        "q",
        AGENTRT_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/x?connect_timeout=2",
    )
    done = subprocess.run(
        [sys.executable, "-m", "agentrt.workers"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "cannot reach the database" in done.stderr
    assert "Traceback" not in done.stderr
