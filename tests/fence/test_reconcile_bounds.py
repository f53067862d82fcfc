"""The fenced write's two bounds in a real run (a worker in this process, the real Temporal dev
server and database; the bounds themselves: test_fence_bounds.py). Issue 40: a write claimed
2-3 times with never-claimed schedules between failed internal_error WriteNeverStarted after
its fifth schedule, the two counted together. Now each bound ends a run in its own reason,
and a write within both goes on."""

import asyncio
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client

from agentrt import (
    Reconciled,
    RunStatus,
    Settings,
    TerminationReason,
    Toolbox,
    ToolContext,
    tool,
)
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.contracts.views import RunView
from agentrt.workflows.fence import WRITE_HEADROOM_SECONDS
from agentrt.workflows.fence_bounds import (
    FENCE_BOUNDS,
    MAX_REEXECUTIONS,
    MAX_UNCLAIMED_SCHEDULES,
)
from tests._payments import payer, payments
from tests._rules import new_queue, one_call, scripted_profile, scripted_worker
from tests.workflows._replay import assert_replays, fetch, patches, scheduled

PROMPT = "Please pay the invoice"
RULES = one_call("pay", "pay", {"invoice": "inv-7"}, "Paid.", "I only pay invoices.")
CLAIM = "write.before_claim"


class Payments:
    """A target whose first `lost` calls are lost before they reach it (the write raises,
    its outcome unknown; its probe finds nothing); later ones apply."""

    def __init__(self, lost: int) -> None:
        self.lost = lost
        self.calls = 0
        self.applied: dict[str, str] = {}
        self._lock = threading.Lock()

    def box(self) -> Toolbox:
        def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
            done = self.applied.get(key)
            return Reconciled.applied(done) if done else Reconciled.not_applied()

        return payments(self._pay, probe)

    def _pay(self, key: str, invoice: str) -> str:
        with self._lock:
            self.calls += 1
            if self.calls <= self.lost:
                raise ConnectionError("connection reset before the payment was sent")
            self.applied[key] = f"paid {invoice}"
            return self.applied[key]


class Unclaimed:
    """The write's claim fails at its `n`th schedules in `at` (the write never starts)."""

    def __init__(self, at: set[int]) -> None:
        self.at, self.reached = at, 0

    def __call__(self, point: str) -> None:
        if point == CLAIM:
            self.reached += 1
            if self.reached in self.at:
                raise RuntimeError("the worker stopped before the claim")


async def _run(
    client: Client, settings: Settings, tmp_path: Path, target: Payments, faults: Unclaimed
) -> RunView:
    async with scripted_worker(
        client, settings, tmp_path, payer(), [target.box()], RULES, faults=faults
    ) as w:
        return await w.runtime.run(w.profile, PROMPT)


async def test_a_write_claimed_three_times_with_unclaimed_schedules_between_goes_on(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Payments(lost=3)
    view = await _run(client, settings, tmp_path, target, Unclaimed(at={2, 4}))
    assert view.status is RunStatus.COMPLETED, view
    assert view.answer == "Paid." and len(target.applied) == 1
    history = await fetch(client, view.run_id)
    assert scheduled(history).count(ACT_WRITE_EXECUTE) == 6  # past the old bound of five
    assert scheduled(history).count(ACT_WRITE_RECONCILE) == 3
    assert patches(history.events) == [FENCE_BOUNDS]  # asked where the rules parted
    await assert_replays(history)


async def test_re_executions_past_their_bound_end_in_their_own_reason(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Payments(lost=100)  # never reaches the target
    view = await _run(client, settings, tmp_path, target, Unclaimed(at=set()))
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.TOOL_FAILED
    assert view.error_type == ErrorType.WRITE_REEXECUTIONS_SPENT.value
    assert view.pending_effect is None  # known not applied: nothing left to reconcile
    assert target.calls == MAX_REEXECUTIONS + 1 and target.applied == {}
    history = await fetch(client, view.run_id)
    assert scheduled(history).count(ACT_WRITE_EXECUTE) == MAX_REEXECUTIONS + 1
    await assert_replays(history)


async def test_never_claimed_schedules_past_their_bound_end_in_their_own_reason(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Payments(lost=0)
    faults = Unclaimed(at=set(range(1, 100)))
    view = await _run(client, settings, tmp_path, target, faults)
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.TOOL_FAILED
    assert view.error_type == ErrorType.WRITE_NEVER_CLAIMED.value
    assert view.pending_effect is None  # each stamp voided: nothing ran
    assert target.calls == 0 and faults.reached == MAX_UNCLAIMED_SCHEDULES
    history = await fetch(client, view.run_id)
    assert ACT_WRITE_RECONCILE not in scheduled(history)
    assert patches(history.events) == []  # both rules stop here: nothing asked
    await assert_replays(history)


async def test_an_async_write_past_its_own_attempt_bound_is_cut_there_and_reconciled(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A tool that declares a 1 s bound and hangs on its first call: the write activity cuts
    the call at its bound (not the profile's 60 s write_seconds), its probe finds nothing,
    and the write runs again, once."""
    applied: dict[str, str] = {}
    calls: list[str] = []

    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        return Reconciled.applied(applied[key]) if key in applied else Reconciled.not_applied()

    @tool(reconcile=probe, attempt_seconds=1)
    async def pay(invoice: str, ctx: ToolContext) -> str:
        """Pay an invoice (not idempotent)."""
        calls.append(ctx.idempotency_key)
        if len(calls) == 1:
            await asyncio.Event().wait()  # hangs: only the bound ends it
        applied[ctx.idempotency_key] = f"paid {invoice}"
        return applied[ctx.idempotency_key]

    profile = scripted_profile("payer", "You pay invoices.", "payments", new_queue())
    box = Toolbox("payments", [pay])
    async with scripted_worker(client, settings, tmp_path, profile, [box], RULES) as w:
        view = await w.runtime.run(w.profile, PROMPT)
    assert view.status is RunStatus.COMPLETED and view.answer == "Paid.", view
    assert len(calls) == 2 and len(set(calls)) == 1 and len(applied) == 1
    history = await fetch(client, view.run_id)
    timeouts = [
        e.activity_task_scheduled_event_attributes.start_to_close_timeout.ToTimedelta()
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == ACT_WRITE_EXECUTE
    ]
    assert timeouts == [timedelta(seconds=1 + WRITE_HEADROOM_SECONDS)] * 2
    await assert_replays(history)
