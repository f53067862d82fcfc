"""A long run's segment boundary while a handler is still at work (workflows/segments.py):
the segment waits a round for it and continues as new only once it has answered, so an
update the run is serving at the boundary gets its answer; and an update or a decision by
signal that reaches the run at the boundary is answered or kept (carried into the next
segment), never lost.

The `reconcile` update answers once the answer is on record; the run records it and, with
no await in between, comes to the top of the next round: with that round due, the handler
is still at work there. To put an update, a signal and the completion of a segment's last
activity into one workflow task, a run is served by two workers on one queue (one runs the
workflow, the other the activities): the segment's last tool call is held at a fault point
while the workflow worker is stopped, the update and the signal are sent, the tool call is
let go, and then a workflow worker comes back."""

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker, WorkerConfig

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_MODEL_COMPLETE, SIGNAL_APPROVE, UPDATE_BEGUN
from agentrt.contracts.run import BegunResult
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import AgentrtPlugin
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests._built import built
from tests.conftest import UnknownOutcome
from tests.workflows._waiting import until_admitted, until_status
from tests.workflows.test_long_runs import CEILING, PRICES, segments

SEGMENT_ROUNDS = 2


class HoldNth:
    """A fault hook that holds the `nth` activity to reach `point` until the test lets it go."""

    def __init__(self, point: str, nth: int) -> None:
        self.point, self.nth, self.hits = point, nth, 0
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, point: str) -> None:
        if point != self.point:
            return
        self.hits += 1  # one tool call at a time in these runs: no race on the count
        if self.hits == self.nth:
            self.reached.set()
            self.release.wait(timeout=60)


class _ActivitiesOnly(AgentrtPlugin):
    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        config = super().configure_worker(config)
        config["workflows"] = []  # this worker polls activity tasks alone
        return config


def _workflow_worker(client: Client, parts: WorkerResources, own: Settings, queue: str) -> Worker:
    plugin = AgentrtPlugin(own, resources=parts)
    return Worker(client, task_queue=queue, plugins=[plugin], no_remote_activities=True)


@asynccontextmanager
async def _activity_worker(
    client: Client, parts: WorkerResources, own: Settings, queue: str
) -> AsyncIterator[None]:
    plugin = _ActivitiesOnly(own, resources=parts)
    async with Worker(client, task_queue=queue, plugins=[plugin]):
        yield


def _rounds(segment: list[HistoryEvent]) -> int:
    """The model calls a segment made: one a round."""
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    return sum(
        1
        for e in segment
        if e.event_type == scheduled
        and e.activity_task_scheduled_event_attributes.activity_type.name == ACT_MODEL_COMPLETE
    )


def _kinds(segment: list[HistoryEvent]) -> list[int]:
    wanted = {
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    }
    return [e.event_type for e in segment if e.event_type in wanted]


async def _no_activity_pending(client: Client, run_id: str) -> None:
    """Until the run has no activity in flight: the held one's completion is at the server."""
    for _ in range(300):
        desc = await client.get_workflow_handle(run_id).describe()
        if not desc.raw_description.pending_activities:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} still has an activity in flight")


def _segmented(settings: Settings, tmp_path: Path, segment_rounds: int) -> Settings:
    (tmp_path / "providers.yaml").write_text(PRICES)
    return settings.replace(
        limits={"max_iterations_ceiling": CEILING, "segment_rounds": segment_rounds},
        providers={"file": tmp_path / "providers.yaml"},
    )


async def test_a_segment_waits_a_round_for_a_reconcile_update_at_work(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """The write of round 1 has an unknown outcome and the run asks; the operator's answer
    is recorded at the end of round 1, where a 1-round segment is due: the segment runs
    round 2 too, and continues as new after the update has answered."""
    own = _segmented(settings, tmp_path, 1)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    with built(own, faults=UnknownOutcome()) as parts:
        runtime = AgentRuntime(client, RunStore(parts.ctx), queue, max_iterations_ceiling=CEILING)
        async with make_worker(client, parts, own.replace(temporal={"task_queue": queue})):
            run_id = await runtime.start("ask-writes", "Please write then look")
            asked = await until_status(
                runtime, run_id, RunStatus.AWAITING_RECONCILIATION, within=60
            )
            write = asked.pending_effect
            assert write is not None and write.fence is not None
            answered = await runtime.reconcile(
                run_id, call_id=write.call_id, fence=write.fence, answered_by="ops",
                answer="applied", result="Refund R-9 was issued (checked by ops).",
            )  # fmt: skip
            view = await asyncio.wait_for(runtime.result(run_id), 60)
            ledger = DemoWorld(parts.ctx).ledger_count(run_id=run_id)
    assert answered.status is not RunStatus.AWAITING_RECONCILIATION
    assert (
        view.status is RunStatus.COMPLETED and view.answer == "Refunded, then looked a long time."
    )
    assert ledger == 0  # the operator said it landed: it is not run again
    parts_ = await segments(client, run_id)
    # Round 1 and, waited for, round 2; then a round a segment; the last, round 5 (the
    # default cap) and the tool-less call that answers at the cap.
    assert view.iterations == 5
    assert [_rounds(s) for s in parts_] == [2, 1, 1, 2]
    first = parts_[0]
    assert _kinds(first) == [
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,  # begun
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,  # reconcile
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    ]
    # The reconcile update answered in the task that scheduled round 2's model call.
    completed = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    answered_at = [e.event_id for e in first if e.event_type == completed][-1]
    models = [e.event_id for e in first if _rounds([e])]
    assert models[0] < answered_at and answered_at - models[1] in (1, 2), (models, answered_at)


async def test_an_update_and_a_signal_at_the_segment_boundary_are_not_lost(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    own = _segmented(settings, tmp_path, SEGMENT_ROUNDS)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    # The last round's tool call of the first segment: its completion brings the boundary.
    # (A read alone in its round: its step rides with the next write, workflows/riding.py.)
    hold = HoldNth("tool.after_defer", SEGMENT_ROUNDS)
    with built(own, faults=hold) as parts:
        runtime = AgentRuntime(client, RunStore(parts.ctx), queue, max_iterations_ceiling=CEILING)
        handle = client.get_workflow_handle
        async with _activity_worker(client, parts, own, queue):
            async with _workflow_worker(client, parts, own, queue):
                run_id = await runtime.start("auto", "loop forever", max_iterations=6)
                assert await asyncio.to_thread(hold.reached.wait, 60), "never reached the hold"
            # No workflow worker now. Both wait at the server for the next workflow task.
            late = ApprovalDecision(approved=True, decided_by="bob", turn_digest="d" * 64)
            await handle(run_id).signal(SIGNAL_APPROVE, late)
            update = asyncio.create_task(
                handle(run_id).execute_update(
                    UPDATE_BEGUN, id="begun-at-the-boundary", result_type=BegunResult
                )
            )
            # Held by the server, with no workflow worker to answer it.
            await until_admitted(client, run_id, "begun-at-the-boundary")
            assert not update.done()
            # The tool call completes: its completion joins them in one workflow task.
            hold.release.set()
            await _no_activity_pending(client, run_id)
            async with _workflow_worker(client, parts, own, queue):
                begun = await asyncio.wait_for(update, 60)
                view = await asyncio.wait_for(runtime.result(run_id), 60)
                refused = await runtime.refused_decisions(run_id)
    assert begun == BegunResult(run_id=run_id, profile="auto", max_iterations=6)
    assert view.status is RunStatus.COMPLETED and view.iterations == 6
    assert view.termination_reason is TerminationReason.MAX_ITERATIONS
    # The refused decision was kept in the segment it reached and carried to the last one.
    assert [(r.refusal, r.decided_by) for r in refused] == [
        (ErrorType.NOT_AWAITING_APPROVAL.value, "bob")
    ]
    parts_ = await segments(client, run_id)
    # SDK 1.35 runs a task's update and signal handlers before the workflow sees the
    # activity's completion (its single-batch activation flag is off by default): the
    # update has answered by the boundary and the segment continues at once. Under that
    # flag, it would wait a round. Either way, every round ran once, and the update
    # answered before the segment continued as new.
    rounds = [_rounds(s) for s in parts_]
    assert sum(rounds) == 7 and rounds[0] in (SEGMENT_ROUNDS, SEGMENT_ROUNDS + 1), rounds
    assert _kinds(parts_[0]) == [
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,  # the start's begun
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    ]
