"""Runs whose refund was interrupted after its claim, for the recorded histories
(tests/workflows/test_replay.py). Reconciled by the refund's probe (the `fence-reconcile`
patch path): it finds the refund applied, or not applied and the refund runs again. Or a
person answers (`on_unknown_outcome: ask`, the `fence-ask` patch path): the probe's target
stays down (UnknownOutcome), the run waits AWAITING_RECONCILIATION, then an operator
answers, one way a run."""

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from agentrt.contracts.enums import PendingState, RunStatus, TerminationReason
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.demo import DemoWorld
from agentrt.workflows.fence_bounds import FENCE_BOUNDS
from tests.conftest import FailTimes, FaultHook, UnknownOutcome
from tests.workflows._waiting import until_status

MakeRuntime = Callable[[FaultHook], AbstractAsyncContextManager[AgentRuntime]]
PROFILE = "ask-writes"  # tests/fixtures/profiles.yaml
PROBE_PROFILE = "auto"  # on_unknown_outcome: fail, the default
PROMPT = "Please refund order 1042"  # lookup_order, then issue_refund, then an answer
# The probe is tried five times first (about 8 s), then the run waits.
ASKED_WITHIN = 60.0

# Each path: the operator's answer, and how the run then ends (status, the refunds the
# ledger holds: an answer of "applied" runs nothing again, a retry runs it once).
ANSWERS: dict[str, tuple[dict[str, Any], RunStatus, int]] = {
    "ask_applied": (
        {"answer": "applied", "result": "Refund R-77 was issued (checked by ops)."},
        RunStatus.COMPLETED, 0,
    ),
    "ask_not_applied_retry": (
        {"answer": "not_applied", "then": "retry"}, RunStatus.COMPLETED, 1,
    ),
    "ask_not_applied_error": (
        {"answer": "not_applied", "then": "error", "result": "The bank refused it."},
        RunStatus.COMPLETED, 0,
    ),
    "ask_give_up": ({"answer": "give_up", "reason": "cannot tell"}, RunStatus.FAILED, 0),
}  # fmt: skip


# Each probe path: where the worker's fault hook interrupts the refund (once), and what
# the probe then finds in the ledger.
PROBED: dict[str, tuple[str, str]] = {
    "reconcile_applied": ("record.before_clear", "applied"),  # ran; its record failed
    "reconcile_not_applied": ("write.after_claim", "not_applied"),  # never ran: runs again
}


# The one path that records a patch marker: a refund scheduled past the combined bound of
# earlier builds (five schedules), behind `fence-bounds` (workflows/fence_bounds.py).
MARKED = {"fence_bounds": [FENCE_BOUNDS]}


async def reconciled_runs(make_runtime: MakeRuntime, ctx: StoreContext) -> dict[str, str]:
    """Every path of PROBED and ANSWERS, and the refund past five schedules, at once (each
    on its own worker and fault hook, all on the store `ctx`): their run ids, by path."""
    names = [*PROBED, *ANSWERS, "fence_bounds"]
    ids = await asyncio.gather(
        *(_probed(make_runtime, ctx, name) for name in PROBED),
        *(_answered(make_runtime, ctx, name) for name in ANSWERS),
        _past_five(make_runtime, ctx),
    )
    return dict(zip(names, ids, strict=True))


class ClaimedThriceUnclaimedTwice:
    """The refund interrupted after its claim at its first, third and fifth schedules (the
    probe finds it not applied: it runs again), never claimed at its second and fourth."""

    def __init__(self) -> None:
        self.schedules = 0

    def __call__(self, point: str) -> None:
        if point == "write.before_claim":
            self.schedules += 1
            if self.schedules in (2, 4):
                raise RuntimeError("the worker stopped before the claim")
        if point == "write.after_claim" and self.schedules in (1, 3, 5):
            raise RuntimeError("interrupted after the claim")


async def _past_five(make_runtime: MakeRuntime, ctx: StoreContext) -> str:
    async with make_runtime(ClaimedThriceUnclaimedTwice()) as runtime:
        done = await runtime.run(PROBE_PROFILE, PROMPT)
    assert done.status is RunStatus.COMPLETED, ("fence_bounds", done)
    assert DemoWorld(ctx).ledger_count(run_id=done.run_id) == 1
    return done.run_id


async def _probed(make_runtime: MakeRuntime, ctx: StoreContext, name: str) -> str:
    point, verdict = PROBED[name]
    # Only the first attempt fails: a record retried after the probe is not reached again.
    async with make_runtime(FailTimes(point)) as runtime:
        done = await runtime.run(PROBE_PROFILE, PROMPT)
        events = await runtime.events(done.run_id)
    assert done.status is RunStatus.COMPLETED, (name, done)
    [refund] = [e for e in events if e.payload.get("tool") == "issue_refund"]
    assert bool(refund.payload.get("reconciled")) is (verdict == "applied"), name
    assert DemoWorld(ctx).ledger_count(run_id=done.run_id) == 1, name  # exactly once
    return done.run_id


async def _answered(make_runtime: MakeRuntime, ctx: StoreContext, name: str) -> str:
    how, status, refunds = ANSWERS[name]
    async with make_runtime(UnknownOutcome()) as runtime:
        run_id = await runtime.start(PROFILE, PROMPT)
        waiting = await until_status(
            runtime, run_id, RunStatus.AWAITING_RECONCILIATION, within=ASKED_WITHIN
        )
        write = waiting.pending_effect
        assert write is not None and write.fence is not None
        assert write.state is PendingState.OUTCOME_UNKNOWN
        await runtime.reconcile(
            run_id, call_id=write.call_id, fence=write.fence, answered_by="replay", **how
        )
        done = await runtime.result(run_id)
        assert done.status is status, (name, done)
        if status is RunStatus.FAILED:
            assert done.termination_reason is TerminationReason.INTERRUPTED_WRITE
        assert DemoWorld(ctx).ledger_count(run_id=run_id) == refunds, name
    return run_id
