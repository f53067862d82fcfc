"""`on_unknown_outcome: ask` under a real crash: the worker PROCESS is SIGKILLed after the
refund's claim, and the fresh worker's probe cannot answer (its target is down). The run
then waits AWAITING_RECONCILIATION holding no worker: no activity is pending, and killing
every worker changes nothing. A person's answer, on a worker started later, lets it go on:
"not applied" runs the refund again under a fresh fence, exactly once."""

import asyncio
import time

import pytest

from agentrt.contracts.enums import EventKind, PendingState, RunStatus, TerminationReason
from agentrt.contracts.ids import ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.contracts.views import RunView
from agentrt.store.demo import DemoWorld
from tests.fence._kill import REFUND_CALL, Killer
from tests.workflows._replay import scheduled

PROBE_DOWN = "reconcile.before_probe"
# Kill, heartbeat timeout (3 s), sticky-queue timeout (10 s), the attempt's start-to-close
# bound (20 s), the probe's five failing attempts (about 8 s): then the run waits.
ASKED_WITHIN = 90.0


async def status_of(killer: Killer, run_id: str, want: RunStatus, within: float) -> RunView:
    deadline = time.monotonic() + within
    while True:
        view = await killer.runtime.status(run_id)
        if view.status is want or time.monotonic() > deadline:
            return view
        await asyncio.sleep(0.5)


@pytest.mark.timeout(240)
async def test_a_killed_write_waits_for_a_person_holding_no_worker(killer: Killer) -> None:
    killed = await killer.kill_at("write.after_claim", profile="ask-writes")
    run_id = killed.run_id
    fresh = killer.fresh(AGENTRT_FAULT_FAIL_AT=PROBE_DOWN)
    waiting = await status_of(killer, run_id, RunStatus.AWAITING_RECONCILIATION, ASKED_WITHIN)
    assert waiting.status is RunStatus.AWAITING_RECONCILIATION, fresh.log_tail()
    write = waiting.pending_effect
    assert write is not None and write.call_id == REFUND_CALL and write.fence
    assert write.state is PendingState.OUTCOME_UNKNOWN
    print(f"\nawaiting reconciliation {time.monotonic() - killed.killed:.1f}s after the kill")

    # No worker holds it: nothing is pending in Temporal, and with every worker gone the
    # run still waits (a timer and a condition, no activity): a worker started after all
    # were killed takes the answer below, which only a run still waiting accepts.
    handle = killer.client.get_workflow_handle(run_id)
    assert (await handle.describe()).raw_description.pending_activities == []
    fresh.kill()
    assert (await killer.runtime.status(run_id)).status is RunStatus.AWAITING_RECONCILIATION
    assert DemoWorld(killer.parts.ctx).ledger_count(run_id=run_id) == 0

    later = killer.fresh()
    answered = await killer.runtime.reconcile(
        run_id, call_id=write.call_id, fence=write.fence, answer="not_applied",
        then="retry", answered_by="ops-oncall",
    )  # fmt: skip
    assert answered.status is not RunStatus.AWAITING_RECONCILIATION
    view = await killer.settle(run_id, later, 60.0)
    assert view.status is RunStatus.COMPLETED, later.log_tail()
    assert view.termination_reason is TerminationReason.ANSWERED
    assert DemoWorld(killer.parts.ctx).ledger_count(run_id=run_id, call_id=REFUND_CALL) == 1
    events = await killer.runtime.events(run_id)
    audit = next(e for e in events if e.kind is EventKind.RECONCILED)
    assert audit.payload["answered_by"] == "ops-oncall"
    activities = scheduled(await killer.history(run_id))
    assert activities.count(ACT_WRITE_EXECUTE) == 2  # the interrupted one, then the retry
    assert activities.count(ACT_WRITE_RECONCILE) == 1
