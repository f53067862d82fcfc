"""One client factory: with payload keys set, a run started from the CLI, the facade or the
demo keeps only ciphertext in Temporal history (the A2A server: tests/api/test_encryption.py).
Each worker also comes from the factory, as `agentrt-worker` makes it."""

import asyncio
import base64
import io
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import SecretStr
from rich.console import Console
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.starter.cli import main
from agentrt.starter.facade import AgentRuntime
from agentrt.workers import embedded
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests._cipher import assert_ciphertext_history
from tests.conftest import TEST_SEAL_KEYS

KEYS = "p1:" + base64.b64encode(b"p" * 32).decode()


@pytest.fixture
def keyed(settings: Settings, temporal_env: WorkflowEnvironment) -> Settings:
    return settings.replace(
        privacy={"payload_keys": SecretStr(KEYS)},
        temporal={
            "address": temporal_env.client.service_client.config.target_host,
            "task_queue": f"tq-{uuid.uuid4().hex[:10]}",
        },
    )


@pytest_asyncio.fixture
async def keyed_worker(keyed: Settings, parts: WorkerResources) -> AsyncIterator[None]:
    async with make_worker(await connect(keyed), parts, keyed):
        yield


def _marker() -> str:
    return f"marker-{uuid.uuid4().hex[:12]}"


async def test_a_run_started_by_the_facade_is_ciphertext_in_history(
    keyed: Settings, keyed_worker: None, temporal_env: WorkflowEnvironment
) -> None:
    marker = _marker()
    async with await AgentRuntime.connect(keyed) as runtime:
        view = await runtime.run("auto", f"what about order 7? {marker}")
    assert view.status is RunStatus.COMPLETED
    await assert_ciphertext_history(temporal_env.client, view.run_id, marker)


async def test_a_run_started_by_the_cli_is_ciphertext_in_history(
    keyed: Settings,
    keyed_worker: None,
    temporal_env: WorkflowEnvironment,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    env = {
        "AGENTRT_TEMPORAL_ADDRESS": keyed.temporal.address,
        "AGENTRT_DATABASE_URL": keyed.database.url,
        "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS,
        "AGENTRT_PAYLOAD_KEYS": KEYS,
        "AGENTRT_TASK_QUEUE": keyed.temporal.task_queue,
        "AGENTRT_PROFILES_FILE": str(keyed.worker.profiles_file),
        "AGENTRT_RULES_FILE": str(keyed.providers.rules_file),
        "AGENTRT_DATA_DIR": str(tmp_path / "data"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    marker = _marker()
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["run", "auto", f"what about order 7? {marker}"])
    err = capsys.readouterr().err
    assert code == 0, err
    found = re.search(r"run ([0-9a-f-]{36}) started", err)
    assert found, err
    await assert_ciphertext_history(temporal_env.client, found.group(1), marker)


async def test_the_demo_run_is_ciphertext_in_history(
    keyed: Settings, temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=300)
    code: list[int] = []
    opts = embedded.DemoOptions(data_dir=tmp_path / "demo")
    await embedded.demo_session(keyed, opts, embedded.DEFAULT_UI_PORT, out, out, code)
    assert code == [0], buffer.getvalue()
    found = re.search(r"Run ([0-9a-f-]{36}) started", buffer.getvalue())
    assert found, buffer.getvalue()
    await assert_ciphertext_history(temporal_env.client, found.group(1), embedded.DEMO_PROMPT)


async def test_bad_payload_keys_are_a_config_error(keyed: Settings) -> None:
    with pytest.raises(ConfigError, match="AGENTRT_PAYLOAD_KEYS"):
        await connect(keyed.replace(privacy={"payload_keys": SecretStr("p1:c2hvcnQ=")}))
