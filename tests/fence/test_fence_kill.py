"""At most once under a crash: the worker PROCESS is SIGKILLed at each point of a fenced write.

A worker blocks at a fault point (workers/faults.py) after dropping a marker file; the
test kills its process group there, starts a fresh worker without the fault and checks
where the run settles. The refund appends one ledger row per execution of the effect, so
the ledger count is the ground truth of how often the write really ran.

The refund has a reconcile probe (a ledger lookup); here the fresh worker's probe fails
on every attempt (its target "down"), so a write interrupted after its claim ends the run
as it would with no probe. With the probe answering: test_reconcile_kill.py.
"""

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import EventKind, Outcome, PendingState, RunStatus, TerminationReason
from agentrt.contracts.ids import ACT_FENCE_RESOLVE, ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from tests.workers._proc import WorkerPool, wait_for_marker, worker_env

PROMPT = "Please refund order 1042"  # lookup_order, then issue_refund (call r2.1), an answer
REFUND_CALL = "r2.1"
# After the kill, settling takes a write heartbeat timeout (3 s) or a store-call timeout
# (10 s), then the dead worker's sticky-queue timeout (10 s): 11-15 s observed.
# Then, for a write interrupted after its claim, the wait for its start-to-close bound
# (20 s) and the probe's five failing attempts (about 8 s).
SETTLE_WITHIN = 60.0
PROBE_DOWN = "reconcile.before_probe"  # the probe's target is down: it never answers


@dataclass(frozen=True)
class Expect:
    status: RunStatus
    ledger_rows: int
    reason: TerminationReason
    pending: PendingState | None
    writes_scheduled: int = 1  # write.execute activities in the history


COMPLETED_ONCE = Expect(RunStatus.COMPLETED, 1, TerminationReason.ANSWERED, None)

CASES = {
    # Killed before the stamp: the stamp is retried by the fresh worker; nothing had run.
    "fence.before_stamp": COMPLETED_ONCE,
    # Stamped, never claimed: resolve says never_claimed, the write is scheduled again.
    "write.before_claim": Expect(
        RunStatus.COMPLETED, 1, TerminationReason.ANSWERED, None, writes_scheduled=2
    ),
    # Claimed, effect not run: with no answer from the probe, the run fails closed.
    "write.after_claim": Expect(
        RunStatus.FAILED, 0, TerminationReason.INTERRUPTED_WRITE, PendingState.OUTCOME_UNKNOWN
    ),
    # Effect ran, step not recorded: the run fails closed and the refund is not repeated.
    "write.after_effect": Expect(
        RunStatus.FAILED, 1, TerminationReason.INTERRUPTED_WRITE, PendingState.OUTCOME_UNKNOWN
    ),
    # Inside the record transaction: the process death rolls it back, as after the effect.
    "record.before_clear": Expect(
        RunStatus.FAILED, 1, TerminationReason.INTERRUPTED_WRITE, PendingState.OUTCOME_UNKNOWN
    ),
}


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[WorkerPool]:
    p = WorkerPool(tmp_path)
    yield p
    p.close()


def _address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", list(CASES))
async def test_kill_at_fault_point(
    point: str,
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    client: Client,
    runtime: AgentRuntime,
    settings: Settings,
    parts: WorkerResources,
    task_queue: str,
    tmp_path: Path,
) -> None:
    expect = CASES[point]
    markers = tmp_path / "markers"
    address = _address(temporal_env)
    faulty = pool.spawn(
        worker_env(
            settings,
            temporal_address=address,
            task_queue=task_queue,
            block_at=point,
            marker_dir=markers,
        )
    )
    started = time.monotonic()
    run_id = await runtime.start("fast-writes", PROMPT)
    await wait_for_marker(markers / point, faulty, within=30.0)
    reached = time.monotonic()
    faulty.kill()

    fresh_env = worker_env(settings, temporal_address=address, task_queue=task_queue)
    fresh_env["AGENTRT_FAULT_FAIL_AT"] = PROBE_DOWN
    fresh = pool.spawn(fresh_env)
    try:
        view = await asyncio.wait_for(runtime.result(run_id), SETTLE_WITHIN)
    except TimeoutError:
        raise AssertionError(f"run did not settle:\n{fresh.log_tail()}") from None
    settled = time.monotonic()
    print(
        f"\n{point}: fault reached after {reached - started:.1f}s, "
        f"settled {settled - reached:.1f}s after the kill as {view.status.value}"
    )

    ledger = DemoWorld(parts.ctx).ledger_count(run_id=run_id, call_id=REFUND_CALL)
    assert ledger <= 1, f"the refund ran {ledger} times"
    assert ledger == expect.ledger_rows
    assert view.status is expect.status
    assert view.termination_reason is expect.reason
    events = await runtime.events(run_id)
    kinds = [e.kind for e in events]
    refunds = [
        e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"
    ]
    if expect.status is RunStatus.COMPLETED:
        assert view.outcome is Outcome.COMPLETED
        assert view.answer is not None and "refunded" in view.answer
        assert view.pending_effect is None
        assert len(refunds) == 1
        assert kinds[-1] is EventKind.RUN_COMPLETED
    else:
        assert view.outcome is Outcome.FAILED
        assert view.answer is None
        assert view.pending_effect is not None
        assert view.pending_effect.call_id == REFUND_CALL
        assert view.pending_effect.tool == "issue_refund"
        assert view.pending_effect.state is expect.pending
        assert refunds == []  # the step was never recorded: its outcome is unknown
        assert kinds[-1] is EventKind.RUN_FAILED
        assert events[-1].payload["reason"] == TerminationReason.INTERRUPTED_WRITE.value

    # The workflow is closed too, not only the row: nothing is left to run the write again.
    handle = client.get_workflow_handle(run_id)
    desc = await handle.describe()
    assert desc.status is not None and desc.status.name in {"COMPLETED", "FAILED"}
    # And the history shows the path taken: a re-scheduled write only after never_claimed.
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in (await handle.fetch_history()).events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled.count(ACT_WRITE_EXECUTE) == expect.writes_scheduled
    resolves = 0 if point == "fence.before_stamp" else 1
    assert scheduled.count(ACT_FENCE_RESOLVE) == resolves
    # The probe was asked (and kept failing) only for a write interrupted after its claim.
    asked = 1 if expect.pending is PendingState.OUTCOME_UNKNOWN else 0
    assert scheduled.count(ACT_WRITE_RECONCILE) == asked
