"""At most once under a crash: the worker PROCESS is SIGKILLed at each point of a fenced write.

A worker blocks at a fault point (workers/faults.py) after dropping a marker file; the
test kills its process group there, starts a fresh worker without the fault and checks
where the run settles. The refund appends one ledger row per execution of the effect, so
the ledger count is the ground truth of how often the write really ran.

The refund has a reconcile probe (a ledger lookup); here the fresh worker's probe fails
on every attempt (its target "down"), so a write interrupted after its claim ends the run
as it would with no probe. With the probe answering: test_reconcile_kill.py.
"""

import time
from dataclasses import dataclass

import pytest

from agentrt.contracts.enums import EventKind, Outcome, PendingState, RunStatus, TerminationReason
from agentrt.contracts.ids import ACT_FENCE_RESOLVE, ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.store.demo import DemoWorld
from tests.fence._kill import REFUND_CALL, Killer
from tests.workflows._replay import most_scheduled_at_once, scheduled

# After the kill, settling takes a write heartbeat timeout (3 s) or a store-call timeout
# (10 s), then the dead worker's sticky-queue timeout (10 s): 11-15 s observed.
# Then, for a write interrupted after its claim, the wait for its start-to-close bound
# (8 s, the fast-writes profile) and the probe's five failing attempts (about 8 s).
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


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", list(CASES))
async def test_kill_at_fault_point(point: str, killer: Killer) -> None:
    expect = CASES[point]
    killed = await killer.kill_at(point)
    run_id, runtime = killed.run_id, killer.runtime
    fresh = killer.fresh(AGENTRT_FAULT_FAIL_AT=PROBE_DOWN)
    view = await killer.settle(run_id, fresh, SETTLE_WITHIN)
    settled = time.monotonic()
    print(
        f"\n{point}: fault reached after {killed.reached - killed.started:.1f}s, "
        f"settled {settled - killed.reached:.1f}s after the kill as {view.status.value}"
    )

    ledger = DemoWorld(killer.parts.ctx).ledger_count(run_id=run_id, call_id=REFUND_CALL)
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
    desc = await killer.client.get_workflow_handle(run_id).describe()
    assert desc.status is not None and desc.status.name in {"COMPLETED", "FAILED"}
    # And the history shows the path taken: a re-scheduled write only after never_claimed.
    activities = scheduled(await killer.history(run_id))
    assert activities.count(ACT_WRITE_EXECUTE) == expect.writes_scheduled
    resolves = 0 if point == "fence.before_stamp" else 1
    assert activities.count(ACT_FENCE_RESOLVE) == resolves
    # The probe was asked (and kept failing) only for a write interrupted after its claim.
    asked = 1 if expect.pending is PendingState.OUTCOME_UNKNOWN else 0
    assert activities.count(ACT_WRITE_RECONCILE) == asked


# One turn: lookup_order, set_record, then the refunds r1.3 and r1.4, run as a group
# (workflows/_group.py). The refunds run one after another (one fence per run), the read and
# the idempotent write beside them; the worker is killed inside the first refund.
GROUP_PROMPT = "Please make parallel refunds"
GROUP_CASES = {
    # Stamped, never claimed: scheduled again under a fresh fence, then the second refund.
    "write.before_claim": (RunStatus.COMPLETED, {"r1.3": 1, "r1.4": 1}),
    # The first refund's effect ran, its step not recorded: the run fails closed, that
    # refund is not repeated and the second one never starts.
    "write.after_effect": (RunStatus.FAILED, {"r1.3": 1, "r1.4": 0}),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", list(GROUP_CASES))
async def test_kill_inside_a_group_of_two_writes_applies_each_at_most_once(
    point: str, killer: Killer
) -> None:
    status, applied = GROUP_CASES[point]
    killed = await killer.kill_at(point, GROUP_PROMPT)
    fresh = killer.fresh(AGENTRT_FAULT_FAIL_AT=PROBE_DOWN)
    view = await killer.settle(killed.run_id, fresh, SETTLE_WITHIN)
    world = DemoWorld(killer.parts.ctx)
    ledger = {c: world.ledger_count(run_id=killed.run_id, call_id=c) for c in applied}
    assert ledger == applied
    assert view.status is status
    events = await killer.runtime.events(killed.run_id)
    refunds = [e.payload["call_id"] for e in events
               if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"]  # fmt: skip
    if status is RunStatus.COMPLETED:
        assert view.answer == "Looked up, noted and refunded both."
        assert refunds == ["r1.3", "r1.4"]
    else:
        assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
        assert view.pending_effect is not None and view.pending_effect.call_id == "r1.3"
        assert refunds == []
    history = await killer.history(killed.run_id)
    assert most_scheduled_at_once(history) > 1  # the turn ran as a group
    writes = scheduled(history).count(ACT_WRITE_EXECUTE)
    assert writes == (3 if status is RunStatus.COMPLETED else 1)
