"""Exactly once under a crash, where the target can answer: the worker PROCESS is SIGKILLed
after the fence's claim, before and after the refund's effect, and a fresh worker's
reconcile probe (the demo refund's ledger lookup by the call's key) finds out what
happened. The run COMPLETES with exactly one ledger row either way. With the probe's
target down, the same kills end the run FAILED interrupted_write (test_fence_kill.py).
"""

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

from agentrt.contracts.ids import ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.core.profiles import load_profiles
from tests.fence._kill import Killer
from tests.workflows._replay import scheduled

# Kill, heartbeat timeout (3 s), the wait for the attempt's start-to-close bound (8 s in
# the fast-writes profile), the probe, then a re-run write or the recorded step.
SETTLE_WITHIN = 75.0
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# The killed runs' profile (Killer's default) and its write bound, from the suite's file.
WRITE_SECONDS = load_profiles(FIXTURES / "profiles.yaml")["fast-writes"].timeouts.write_seconds


@dataclass(frozen=True)
class Expect:
    writes_scheduled: int  # write.execute activities in the history
    reconciled: bool  # the refund's step was recorded from the probe's answer


CASES = {
    # Claimed, the effect never ran: the probe finds no row, the write runs again, once.
    "write.after_claim": Expect(writes_scheduled=2, reconciled=False),
    # The effect ran, its step was not recorded: the probe finds the row; no second refund.
    "write.after_effect": Expect(writes_scheduled=1, reconciled=True),
    # Inside the record transaction: rolled back by the death, as after the effect.
    "record.before_clear": Expect(writes_scheduled=1, reconciled=True),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", list(CASES))
async def test_kill_inside_the_write_window_is_reconciled_to_exactly_one_write(
    point: str, killer: Killer
) -> None:
    expect = CASES[point]
    # Exactly once: one ledger row, whichever side of the effect the worker died on.
    killed, view, refund = await killer.refunded_through([point], SETTLE_WITHIN)
    run_id = killed.run_id
    print(f"\n{point}: settled {time.monotonic() - killed.killed:.1f}s after the kill")
    assert view.answer is not None and "refunded" in view.answer
    assert refund.payload.get("reconciled", False) is expect.reconciled
    if expect.reconciled:
        assert "found in the ledger" in refund.payload["result"]

    history = await killer.history(run_id)
    activities = scheduled(history)
    assert activities.count(ACT_WRITE_EXECUTE) == expect.writes_scheduled
    assert activities.count(ACT_WRITE_RECONCILE) == 1
    # The probe ran only once the interrupted attempt could no longer land: no earlier
    # than its schedule plus the profile's write bound. A durable timer waits that out,
    # unless the worker's restart on a loaded machine outlasted the bound by itself.
    write_at = _scheduled_at(history, ACT_WRITE_EXECUTE)[0]
    probe_at = _scheduled_at(history, ACT_WRITE_RECONCILE)[0]
    assert probe_at - write_at >= timedelta(seconds=WRITE_SECONDS), (write_at, probe_at)


def _scheduled_at(history: WorkflowHistory, activity: str) -> list[datetime]:
    """When each `activity` was scheduled, by the server's event times, in order."""
    return [
        e.event_time.ToDatetime()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == activity
    ]
