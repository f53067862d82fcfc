"""Runs that ask a person (`on_unknown_outcome: ask`, the `fence-ask` patch path), for the
recorded histories (tests/workflows/test_replay.py): the refund is claimed, its worker's
fault hook raises before the effect and the probe's target stays down (UnknownOutcome), so
the run waits AWAITING_RECONCILIATION; then an operator answers, one way a run."""

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from agentrt.contracts.enums import PendingState, RunStatus, TerminationReason
from agentrt.starter.facade import AgentRuntime
from agentrt.store.context import StoreContext
from agentrt.store.demo import DemoWorld
from tests.conftest import FaultHook, UnknownOutcome
from tests.workflows._waiting import until_status

MakeRuntime = Callable[[FaultHook], AbstractAsyncContextManager[AgentRuntime]]
PROFILE = "ask-writes"  # tests/fixtures/profiles.yaml
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


async def asked_runs(make_runtime: MakeRuntime, ctx: StoreContext) -> dict[str, str]:
    """Every path of ANSWERS, at once (each on its own worker and fault hook, all on the
    store `ctx`): their run ids."""
    names = list(ANSWERS)
    ids = await asyncio.gather(*(_answered(make_runtime, ctx, name) for name in names))
    return dict(zip(names, ids, strict=True))


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
