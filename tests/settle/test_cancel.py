"""Cancel: a signal and Temporal's native cancel take one path to a terminal CANCELLED."""

import asyncio
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker

from agentrt.contracts.approval import CancelRequest
from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import RunNotAwaitingApprovalError
from agentrt.contracts.ids import SIGNAL_CANCEL
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import sandbox_runner
from agentrt.workflows.agent_run import AgentRunWorkflow
from tests.workflows._waiting import until_status

REFUND = "Please refund order 1042"
MakeRuntime = Callable[[Callable[[str], None]], AbstractAsyncContextManager[AgentRuntime]]


class Gate:
    """A fault hook that holds an activity at `point` until the test opens the gate."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, point: str) -> None:
        if point == self.point:
            self.reached.set()
            self.release.wait(timeout=30)


async def _cancel_event(runtime: AgentRuntime, run_id: str) -> dict[str, object]:
    # By sequence: the call in flight at the cancel may commit its `llm` event after it
    # (events() gives commit order).
    events = sorted(await runtime.events(run_id), key=lambda e: e.sequence)
    cancels = [e for e in events if e.kind is EventKind.CANCEL]
    assert len(cancels) == 1 and events[-1].kind is EventKind.CANCEL
    return cancels[0].payload


async def _close_status(client: Client, run_id: str) -> str:
    handle = client.get_workflow_handle(run_id)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    desc = await handle.describe()
    assert desc.status is not None
    return desc.status.name


async def test_cancel_while_waiting_is_terminal_and_refuses_a_later_approval(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources, client: Client
) -> None:
    waiting = await runtime.run("support", REFUND)
    assert waiting.pending_approval is not None
    await runtime.cancel(waiting.run_id, by="ops", reason="customer withdrew")
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.CANCELLED and done.outcome is Outcome.CANCELLED
    assert done.termination_reason is TerminationReason.CANCELLED
    assert done.pending_approval is None
    payload = await _cancel_event(runtime, done.run_id)
    assert payload["by"] == "ops" and payload["note"] == "customer withdrew"
    # One outcome, one close status: a cancel by the facade (and `agentrt cancel`) closes
    # the workflow CANCELED, as `temporal workflow cancel` does, not FAILED.
    assert await _close_status(client, done.run_id) == "CANCELED"
    with pytest.raises(RunNotAwaitingApprovalError):
        await runtime.approve(
            done.run_id,
            approved=True,
            decided_by="bob",
            turn_digest=waiting.pending_approval.turn_digest,
        )
    await runtime.cancel(done.run_id, by="ops")  # nothing resurrects, nothing changes
    assert (await runtime.status(done.run_id)).revision == done.revision
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 0


async def test_native_cancel_from_the_client_api_takes_the_same_path(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    waiting = await runtime.run("support", REFUND)
    handle = client.get_workflow_handle(waiting.run_id)
    await handle.cancel()
    assert await _close_status(client, waiting.run_id) == "CANCELED"
    done = await runtime.status(waiting.run_id)
    assert done.status is RunStatus.CANCELLED
    assert (await _cancel_event(runtime, done.run_id))["by"] == "temporal"


async def test_a_cancel_by_the_facade_while_running_closes_canceled_once(
    make_runtime: MakeRuntime, client: Client
) -> None:
    """Signal and Temporal's cancel land while a model call is in flight: one settle, one
    cancel event naming the facade's actor, and the workflow closes CANCELED."""
    gate = Gate("model.before_provider")
    async with make_runtime(gate) as runtime:
        run_id = await _held_at(gate, runtime)
        await runtime.cancel(run_id, by="ops", reason="wrong customer")
        await until_status(runtime, run_id, RunStatus.CANCELLED)
        gate.release.set()
        assert await _close_status(client, run_id) == "CANCELED"
        payload = await _cancel_event(runtime, run_id)
    assert payload["by"] == "ops" and payload["note"] == "wrong customer"


async def test_cancel_during_a_claimed_write_lets_it_finish_and_be_recorded(
    make_runtime: MakeRuntime, parts: WorkerResources, client: Client
) -> None:
    gate = Gate("write.after_claim")
    async with make_runtime(gate) as runtime:
        run_id = await _held_at(gate, runtime)
        await runtime.cancel(run_id, by="ops")
        # The workflow asks the claimed write to cancel, and waits for it: the run is not
        # settled while the write is in flight.
        await _until_history_has(
            client, run_id, EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED
        )
        assert (await runtime.status(run_id)).status is RunStatus.RUNNING
        gate.release.set()
        done = await runtime.result(run_id)
        events = await runtime.events(run_id)
    assert done.status is RunStatus.CANCELLED
    assert done.pending_effect is None  # recorded and cleared, not interrupted
    assert DemoWorld(parts.ctx).ledger_count(run_id=run_id) == 1
    writes = [e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"]
    assert len(writes) == 1 and writes[0].payload["is_error"] is False
    assert events.index(writes[0]) < len(events) - 1 and events[-1].kind is EventKind.CANCEL


async def _until_history_has(
    client: Client,
    run_id: str,
    kind: "EventType.ValueType",
    after: "EventType.ValueType | None" = None,
) -> None:
    """Poll the history until it holds `kind` (after an event of type `after`, if given)."""
    handle = client.get_workflow_handle(run_id)
    for _ in range(300):
        types = [e.event_type for e in (await handle.fetch_history()).events]
        start = types.index(after) if after is not None and after in types else None
        if (after is None or start is not None) and kind in types[(start or 0) :]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"history of {run_id} never got event type {kind}")


async def test_a_cancel_before_the_fence_stamp_means_the_write_never_runs(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    gate = Gate("fence.before_stamp")
    async with make_runtime(gate) as runtime:
        run_id = await _held_at(gate, runtime)
        await runtime.cancel(run_id, by="ops")
        await until_status(runtime, run_id, RunStatus.CANCELLED)
        gate.release.set()
        done = await runtime.result(run_id)
    assert done.status is RunStatus.CANCELLED
    assert done.pending_effect is None  # the late stamp found the run cancelled
    assert DemoWorld(parts.ctx).ledger_count(run_id=run_id) == 0


async def _wait_thread_event(event: threading.Event, within: float = 30.0) -> bool:
    return await asyncio.to_thread(event.wait, within)


async def _held_at(gate: Gate, runtime: AgentRuntime) -> str:
    """Start the refund run; return its id once it is held at the gate's point."""
    run_id = await runtime.start("auto", REFUND)
    assert await _wait_thread_event(gate.reached)
    return run_id


async def test_a_cancel_delivered_with_the_suspensions_result_is_not_swallowed(
    client: Client, settings: Settings, parts: WorkerResources
) -> None:
    """The cancel signal and the completed suspension reach the workflow in one activation:
    the cancel must not be lost to the activity that had already completed."""
    gate = Gate("suspend.before_commit")
    built = build(settings, faults=gate)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    runtime = AgentRuntime(client, RunStore(built.ctx), queue)

    def workflows_only() -> Worker:
        # Workflow tasks and the local store steps (begin, complete) only: every activity
        # task goes to the other worker.
        return Worker(
            client,
            task_queue=queue,
            workflows=[AgentRunWorkflow],
            activities=built.activities,
            activity_executor=built.executor,
            no_remote_activities=True,
            workflow_runner=sandbox_runner(),
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
        )

    try:
        async with Worker(
            client, task_queue=queue, activities=built.activities, activity_executor=built.executor
        ):
            async with workflows_only():
                run_id = await runtime.start("support", REFUND)
                assert await _wait_thread_event(gate.reached)
            # No workflow worker now: the signal and the activity's result queue up together.
            # (Signalled directly: the facade would first read the row the gate holds locked.)
            await client.get_workflow_handle(run_id).signal(SIGNAL_CANCEL, CancelRequest(by="ops"))
            gate.release.set()
            await _until_history_has(
                client,
                run_id,
                EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
                after=EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
            )
            async with workflows_only():
                done = await asyncio.wait_for(runtime.result(run_id), timeout=30)
    finally:
        built.close()
    assert done.status is RunStatus.CANCELLED
    assert (await _cancel_event(runtime, run_id))["by"] == "ops"
    # Signalled directly, with no Temporal cancel after it: settled CANCELLED all the same.
