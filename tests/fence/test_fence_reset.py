"""At most once across a workflow reset and a duplicate execution of the write.

A reset re-runs the workflow code from an earlier point of its history on the same run
row and the same database: the finished refund must be recognised, never run again. With
the stamp a local activity, no reset point lies between the stamp and the write: what
carries the guarantee is the stamp's check of the recorded step (a reset re-runs it) and
the claim's token (a duplicate execution of the write is refused), each pinned here.
"""

import asyncio
import threading
import uuid

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from agentrt.activities.fence import WriteActivities, _sql
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.contracts.enums import EventKind, RunStatus, ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_FENCE_STAMP, ACT_WRITE_EXECUTE, idempotency_key
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import FenceRequest, FenceState, ToolCallRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.fence._history import stamp_markers, stamp_state
from tests.store.test_step_rows import _run

PROMPT = "Please refund order 1042"
REFUND_CALL = "r2.1"
WITHIN = 60.0


def _scheduled(events: list[HistoryEvent], activity: str) -> list[HistoryEvent]:
    return [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == activity
    ]


def _reset_point(events: list[HistoryEvent], where: str) -> int:
    """The WorkflowTaskCompleted event to reset to (the workflow task it closed re-runs).

    The stamp is a local activity: it runs in the workflow task that schedules the write,
    so `before_stamp` (the task that ran the stamp) and `before_write` (the task that
    scheduled the write) are one task, reached two ways."""
    completed = [
        e.event_id for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    if where == "first_task":
        return completed[0]
    if where == "before_stamp":
        marker = stamp_markers(events)[0].event_id
        return max(i for i in completed if i < marker)
    attrs = _scheduled(events, ACT_WRITE_EXECUTE)[0].activity_task_scheduled_event_attributes
    return attrs.workflow_task_completed_event_id


async def _reset(client: Client, workflow_id: str, run_id: str, event_id: int) -> str:
    resp = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id, run_id=run_id),
            reason="test: replay a finished refund",
            workflow_task_finish_event_id=event_id,
            request_id=str(uuid.uuid4()),
        )
    )
    return resp.run_id


@pytest.mark.parametrize("where", ["first_task", "before_stamp", "before_write"])
async def test_reset_of_a_completed_refund_does_not_refund_again(
    where: str, client: Client, runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    world = DemoWorld(parts.ctx)
    view = await asyncio.wait_for(runtime.run("auto", PROMPT), WITHIN)
    assert view.status is RunStatus.COMPLETED
    assert world.ledger_count(run_id=view.run_id, call_id=REFUND_CALL) == 1
    events_before = await runtime.events(view.run_id)

    handle = client.get_workflow_handle(view.run_id)
    first_run = (await handle.describe()).run_id
    reset_at = _reset_point(list((await handle.fetch_history()).events), where)
    new_run = await _reset(client, view.run_id, first_run, reset_at)
    assert new_run and new_run != first_run

    # The new execution runs to its end on the same row: it completes, adding nothing.
    reset_handle = client.get_workflow_handle(view.run_id, run_id=new_run)
    await asyncio.wait_for(reset_handle.result(), WITHIN)
    assert world.ledger_count(run_id=view.run_id, call_id=REFUND_CALL) == 1
    after = await runtime.status(view.run_id)
    assert after.status is RunStatus.COMPLETED
    assert after.answer == view.answer
    assert after.revision == view.revision
    assert after.pending_effect is None
    assert await runtime.events(view.run_id) == events_before

    # Events up to the reset point are copied; later ones are the new execution's.
    redone = [e for e in (await reset_handle.fetch_history()).events if e.event_id > reset_at]
    writes = _scheduled(redone, ACT_WRITE_EXECUTE)
    # At every point the new execution ran the stamp again (a local activity: a marker, no
    # scheduled stamp), which found the recorded step: the write was not scheduled again.
    # A re-execution that got past a stamp is refused by the claim's token:
    # test_duplicate_execution_of_a_recorded_write_is_refused.
    assert _scheduled(redone, ACT_FENCE_STAMP) == []
    [stamp] = stamp_markers(redone)
    assert await stamp_state(client.data_converter, stamp) == FenceState.ALREADY_DONE
    assert writes == []


async def test_duplicate_execution_of_a_recorded_write_is_refused(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources, runs: RunStore
) -> None:
    """The write path entered twice for one call, as a duplicate activity would: the fence
    refuses both a new stamp and a stale token, and the effect does not run again."""
    world = DemoWorld(parts.ctx)
    view = await asyncio.wait_for(runtime.run("auto", PROMPT), WITHIN)
    run_id = view.run_id
    assert world.ledger_count(run_id=run_id, call_id=REFUND_CALL) == 1
    refund = next(
        e.payload
        for e in await runtime.events(run_id)
        if e.kind is EventKind.TOOL and e.payload["call_id"] == REFUND_CALL
    )
    key = idempotency_key(run_id, REFUND_CALL)

    fence = FenceRequest(run_id=run_id, call_id=REFUND_CALL, tool="issue_refund", token="t2")
    verdict = _sql.stamp(parts.ctx, fence, key)
    assert verdict == FenceState.ALREADY_DONE

    assert parts.executor is not None
    write = WriteActivities(
        ctx=parts.ctx, registry=ToolRegistry(demo_tools(world)), executor=parts.executor
    )
    request = ToolCallRequest(
        run_id=run_id,
        round=2,
        sequence=4,
        call=ToolCall(call_id=REFUND_CALL, name="issue_refund", arguments=refund["arguments"]),
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        idempotency_key=key,
        privacy="full",
        fence_token=str(uuid.uuid4()),  # stale: the run's fence was cleared when recorded
    )
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(write.execute, request)
    assert refused.value.type == ErrorType.FENCE_REJECTED.value
    assert world.ledger_count(run_id=run_id, call_id=REFUND_CALL) == 1
    assert _sql.resolve(parts.ctx, fence, key) == FenceState.ALREADY_DONE
    after = runs.get(run_id)
    assert after is not None and after.status is RunStatus.COMPLETED
    assert after.pending_effect is None


async def test_a_claimed_write_survives_repeated_cancellation(
    parts: WorkerResources, runs: RunStore
) -> None:
    """A run's cancel, then a worker shutdown: the claimed write is cancelled twice. It
    must still run once and be recorded, not die between its claim and its record."""
    world = DemoWorld(parts.ctx)
    run_id = _run(parts)  # a running run
    key = idempotency_key(run_id, REFUND_CALL)
    tok = str(uuid.uuid4())
    fence = FenceRequest(run_id=run_id, call_id=REFUND_CALL, tool="issue_refund", token=tok)
    assert _sql.stamp(parts.ctx, fence, key) == FenceState.STAMPED
    reached, release = threading.Event(), threading.Event()

    def hold_after_claim(point: str) -> None:
        if point == "write.after_claim":
            reached.set()
            release.wait(timeout=WITHIN)

    assert parts.executor is not None
    write = WriteActivities(
        ctx=parts.ctx,
        registry=ToolRegistry(demo_tools(world)),
        executor=parts.executor,
        faults=hold_after_claim,
    )
    request = ToolCallRequest(
        run_id=run_id,
        round=1,
        sequence=1,
        call=ToolCall(
            call_id=REFUND_CALL,
            name="issue_refund",
            arguments={"order_id": "1042", "amount_cents": 5},
        ),
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        idempotency_key=key,
        privacy="full",
        fence_token=tok,
    )
    task = asyncio.create_task(ActivityEnvironment().run(write.execute, request))
    assert await asyncio.to_thread(reached.wait, WITHIN)
    for _ in range(2):
        task.cancel()
        # Let the activity take the cancellation before the next one arrives.
        for _ in range(5):
            await asyncio.sleep(0)
    release.set()
    outcome = await asyncio.wait_for(task, WITHIN)
    assert not outcome.is_error
    assert world.ledger_count(run_id=run_id, call_id=REFUND_CALL) == 1
    assert ToolStepStore(parts.ctx).result(key) is not None
    view = runs.get(run_id)
    assert view is not None and view.pending_effect is None
