"""A read's step rides with the next model call (issue 45, workflows/riding.py): the worker
PROCESS SIGKILLed after the read returned its rows unwritten, and after the model call that
carries them committed. Either way the run completes with the read's step recorded exactly
once, at its sequence, and its events in sequence order.

"Please refund order 1042": lookup_order (r1.1, a read alone in its round: deferred), then
issue_refund (its round holds a write: nothing deferred), then the answer."""

import pytest

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.ids import ACT_TOOL_EXECUTE, ACT_TOOL_RECORD_DEFERRED
from agentrt.store.runs.record import RunStore
from tests.fence._kill import Killer
from tests.workflows._replay import scheduled

SETTLE_WITHIN = 60.0
READ_CALL = "r1.1"

# Each case: the fault points, in order, at which a worker is killed (the first by
# `kill_at`, each next one on the worker that took the run over), then a fresh one settles.
CASES = {
    # The read ran, its rows returned to nobody: the retried call runs it again.
    "after the read": ("tool.after_defer",),
    # The second model call (the one the read rides with) committed, its result lost.
    "after the model commit": ("model.after_record#2",),
    # Both, one after the other: the successor's first model call is the one it rides with.
    "after both": ("tool.after_defer", "model.after_record"),
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", list(CASES))
async def test_a_killed_worker_loses_no_read_and_records_none_twice(
    case: str, killer: Killer
) -> None:
    killed, view, _ = await killer.refunded_through(CASES[case], SETTLE_WITHIN)
    assert view.status is RunStatus.COMPLETED

    events = await killer.runtime.events(killed.run_id)
    reads = [e for e in events if e.kind is EventKind.TOOL and e.payload["call_id"] == READ_CALL]
    assert len(reads) == 1, [e.kind for e in events]
    assert reads[0].payload["tool"] == "lookup_order"
    # The timeline in sequence order, every sequence once: the read's event committed with
    # the turn after it, and reads before it.
    assert [e.sequence for e in events] == list(range(len(events)))
    transcript = RunStore(killer.parts.ctx).transcript(killed.run_id)
    results = [m for m in transcript if m.role == "tool" and m.tool_call_id == READ_CALL]
    assert len(results) == 1
    # The read rode with a model call: nothing recorded it alone.
    activities = scheduled(await killer.history(killed.run_id))
    assert ACT_TOOL_RECORD_DEFERRED not in activities
    assert activities.count(ACT_TOOL_EXECUTE) == 1
