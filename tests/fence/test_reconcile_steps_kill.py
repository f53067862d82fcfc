"""Reconciliation survives its own retries (issue 40 item 2): the worker PROCESS is SIGKILLed
inside the write window and then again at each step of the reconciliation that follows,
and at the re-executions it releases: in the resolve, before the probe, between the void
and its report, between the probe's record and its report, and inside every re-executed
write. Each kill leaves the step to a successor worker, which is killed at the next point;
the last worker runs unarmed. Every run ends COMPLETED with exactly one ledger row, the
re-executions exactly those the probe released, and its history replays.

The refund declares its own attempt bound (1 s: bench/bounded_tools.py), so each
reconciliation waits that bound, not the profile's `write_seconds` (8 s here)."""

import time
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType

from agentrt.contracts.ids import ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.workflows.fence import LANDING_MARGIN_SECONDS
from bench import bounded_tools
from tests.fence._kill import Killer
from tests.workflows._replay import assert_replays, scheduled

CLAIM, EFFECT = "write.after_claim", "write.after_effect"

# Each case: the fault point of every worker killed in turn, first the run's own.
CASES = {
    "resolve": [CLAIM, "fence.after_resolve"],
    "probe": [CLAIM, "reconcile.before_probe"],
    # Issue 40: attempt 1 voided the fence, its worker died before it reported; attempt 2
    # found no fence to void and answered "unknown". It must go on to the re-execution.
    "void": [CLAIM, "reconcile.after_void"],
    "record": [EFFECT, "reconcile.after_record"],
    # Killed at every re-execution: each time the probe finds it not applied.
    "every_re_execution": [CLAIM, CLAIM, CLAIM],
    "re_execution_applied": [CLAIM, EFFECT],
    "void_then_re_execution": [CLAIM, "reconcile.after_void", CLAIM],
}
# Per kill: write heartbeat timeout (3 s), sticky queue (3 s), a worker's start (~3 s).
SETTLE_WITHIN = 90.0


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", list(CASES))
async def test_a_kill_at_every_step_of_reconciliation_ends_in_exactly_one_write(
    case: str, killer: Killer
) -> None:
    points = CASES[case]
    env = bounded_tools.worker_env()
    killed, _, refund = await killer.refunded_through(points, SETTLE_WITHIN, env)
    print(f"\n{case}: COMPLETED {time.monotonic() - killed.started:.1f}s after its start")
    run_id = killed.run_id
    assert bool(refund.payload.get("reconciled")) is (EFFECT in points)

    history = await killer.history(run_id)
    activities = scheduled(history)
    # One write, and one more for each time the probe found it not applied.
    assert activities.count(ACT_WRITE_EXECUTE) == 1 + points.count(CLAIM)
    assert activities.count(ACT_WRITE_RECONCILE) == len([p for p in points if p in (CLAIM, EFFECT)])
    # Each wait before a probe followed the tool's bound, not the profile's write_seconds.
    waits = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    bound = timedelta(seconds=bounded_tools.ATTEMPT_SECONDS + LANDING_MARGIN_SECONDS)
    assert all(w <= bound for w in waits), waits
    await assert_replays(history)
