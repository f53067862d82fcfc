"""A2A start and cancel take the facade's paths (issue 9 items 3 and 2): a skill the
worker cannot begin is refused at once and leaves no task; a task whose run has not begun
is cancelled like any other run, and its workflow closes CANCELED."""

import asyncio
import uuid

import pytest
from a2a.types import Message, Part, Role, SendMessageRequest
from a2a.utils.errors import InvalidParamsError
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.worker import Worker

from agentrt.api.a2a.tasks import TaskService
from agentrt.api.settings import ApiSettings
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.core.profiles import load_profiles
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.a2a.view import CANCELED
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests.api.ops_helpers import register_as_the_suite
from tests.workflows._waiting import CANCEL_REQUESTED, has, until_history


def _service(
    a2a_settings: ApiSettings, parts: WorkerResources, client: Client, queue: str
) -> TaskService:
    runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
    # Registered as the A2A tests' worker registers them (a2a_parts).
    register_as_the_suite(parts, load_profiles(a2a_settings.worker.profiles_file).values())
    registry = ProfileRegistry(parts.ctx)
    return TaskService(a2a_settings, A2AStore(parts.ctx), runtime, registry)


def _send(text: str) -> SendMessageRequest:
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=msg)


@pytest.mark.usefixtures("worker")
async def test_a_skill_the_worker_does_not_declare_is_refused_and_leaves_no_task(
    a2a_settings: ApiSettings, parts: WorkerResources, client: Client, task_queue: str
) -> None:
    # A worker registered `helper`; this one, which polls the queue, does not declare it
    # (its profiles are tests/fixtures').
    owner = f"o-{uuid.uuid4().hex[:8]}"
    granted = a2a_settings.replace(  # a caller granted `helper` (tests/security: grants)
        api={
            "keys": f"{a2a_settings.api.keys},{owner}={'0' * 64}",
            "key_profiles": f"{a2a_settings.api.key_profiles},{owner}=helper",
        }
    )
    service = _service(granted, parts, client, task_queue)
    with pytest.raises(InvalidParamsError, match="'helper' is not served"):
        await service.create(_send("hello"), owner)
    assert A2AStore(parts.ctx).page(owner=owner).total == 0


async def test_cancel_of_a_task_whose_run_has_not_begun_closes_it_canceled(
    a2a_settings: ApiSettings, a2a_parts: WorkerResources, client: Client
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    service = _service(a2a_settings, a2a_parts, client, queue)
    owner, task_id, run_id = "alice", str(uuid.uuid4()), str(uuid.uuid4())
    first = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    await asyncio.to_thread(
        lambda: A2AStore(a2a_parts.ctx).create(
            task_id=task_id, context_id=str(uuid.uuid4()), workflow_id=run_id, owner=owner,
            profile="helper", answer_level="full", message=first,
        )
    )  # fmt: skip
    # Started (as by an older API process) but no worker has begun it.
    await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(run_id=run_id, profile="helper", prompt="hello", a2a_task_id=task_id),
        id=run_id,
        task_queue=queue,
    )
    cancel = asyncio.create_task(service.cancel(task_id, owner))
    # The cancel is at the server before any worker polls.
    await until_history(client, run_id, has(CANCEL_REQUESTED), "the cancel request")
    worker: Worker = make_worker(
        client, a2a_parts, a2a_settings.replace(temporal={"task_queue": queue})
    )
    async with worker:
        rec = await asyncio.wait_for(cancel, 40)
        handle = client.get_workflow_handle(run_id)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    assert (await handle.describe()).status is WorkflowExecutionStatus.CANCELED
    assert rec.state == CANCELED
    runs = RunStore(a2a_parts.ctx)
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    last = runs.events(run_id)[-1]
    assert last.kind is EventKind.CANCEL and last.payload["by"] == f"a2a:{owner}"
