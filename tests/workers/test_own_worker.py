"""Issue 42, done means: a user's own worker with TLS, MCP servers and routed queues is one
plugin line plus `Worker(...)`, in a docs page that runs as a test. The page's code runs
here as written, against Temporal behind an mTLS-terminating proxy (tests/_tls.py), with
the model calls routed to their own queue: its workflow runs an agent as one step (a
child workflow), whose MCP server the plugin started and whose model calls only the
plugin's routed worker polled."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.ids import ACT_MODEL_COMPLETE
from agentrt.core.settings import Settings
from agentrt.store.db.sealing import Sealer
from tests._markdown import code_blocks, python_path, run_python, write_module
from tests._tls import Pki, mtls_proxy
from tests.conftest import TEST_SEAL_KEYS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "own-worker.md"


@pytest.fixture
def pki(temporal_env: WorkflowEnvironment, tmp_path: Path) -> Iterator[Pki]:
    with mtls_proxy(temporal_env.client.service_client.config.target_host, tmp_path) as made:
        yield made


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "payload_keys", [None, "k1:" + Sealer.new_key_b64()], ids=["clear", "keys"]
)
async def test_the_own_worker_page_runs_over_mtls_with_mcp_and_routed_model_calls(
    payload_keys: str | None,
    pki: Pki,
    settings: Settings,
    temporal_env: WorkflowEnvironment,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = f"models-{uuid.uuid4().hex[:8]}"
    env = pki.env(
        AGENTRT_DATABASE_URL=settings.database.resolved_url(),
        AGENTRT_SEAL_KEYS=TEST_SEAL_KEYS,
        AGENTRT_DATA_DIR=str(tmp_path / "data"),
        AGENTRT_MODEL_TASK_QUEUE=models,
        AGENTRT_RETENTION_TASK_QUEUE=f"maint-{uuid.uuid4().hex[:8]}",
    )
    if payload_keys is not None:  # every payload encrypted and bound to its run, the
        env["AGENTRT_PAYLOAD_KEYS"] = payload_keys  # child's input to the child's id
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    blocks = [b for b in code_blocks(PAGE) if b.lang == "python"]
    folder = tmp_path / "snippets"
    scope: dict[str, Any] = {}
    with python_path(folder):
        for block in blocks:
            if block.module is not None:
                write_module(block, folder)
        for block in blocks:
            if block.module is None:
                scope = await run_python(block)

    view = scope["view"]
    assert view.status is RunStatus.COMPLETED, view
    # The plugin started the MCP server and offered its tool to the profile.
    registry = scope["plugin"].resources.registry
    assert registry.group("stock") == ["stock.stock"]
    # The worker reached Temporal only through the proxy, with its client certificate.
    assert pki.proxy.accepted >= 1
    # The agent ran as a child of the page's workflow, its model calls on the routed queue.
    history = await temporal_env.client.get_workflow_handle(view.run_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.parent_workflow_execution.workflow_id.startswith("q-")
    queues = {
        e.activity_task_scheduled_event_attributes.task_queue.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == ACT_MODEL_COMPLETE
    }
    assert queues == {f"{models}-scripted"}
