"""The write fence's guarded transitions (activities/fence/_sql.py) on the real database.

Each transition is one conditional write on the run row; these tests pin which state
each one accepts and what it refuses, including two callers racing for the same fence.
"""

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from sqlalchemy import update

from agentrt.activities.fence import _sql, void_unclaimed
from agentrt.activities.settle import Settle
from agentrt.contracts.enums import Outcome, PendingState, RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.run import FenceRequest, FenceState, SettleRequest
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import EventRow, RunRow, ToolResultRow
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStep, ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run
from tests.store.test_step_rows import _count, _run, _statements

T = TypeVar("T")

CALL = ToolCall(call_id="r1.1", name="issue_refund", arguments={"order_id": "1042"})
OTHER = ToolCall(call_id="r1.2", name="issue_refund", arguments={"order_id": "1043"})


def token() -> str:
    return str(uuid.uuid4())


def _request(run_id: str, tok: str, call: ToolCall) -> FenceRequest:
    return FenceRequest(run_id=run_id, call_id=call.call_id, tool=call.name, token=tok)


def stamp(fence: StoreContext, run_id: str, tok: str, call: ToolCall = CALL) -> str:
    key = idempotency_key(run_id, call.call_id)
    return _sql.stamp(fence, _request(run_id, tok, call), key)


def resolve(fence: StoreContext, run_id: str, tok: str, call: ToolCall = CALL) -> str:
    key = idempotency_key(run_id, call.call_id)
    return _sql.resolve(fence, _request(run_id, tok, call), key)


def claim(fence: StoreContext, run_id: str, tok: str) -> bool:
    """Whether the claim took the fence (a refusal says why; see the write activity)."""
    return _sql.claim(fence, run_id, tok) is None


def stamped(fence: StoreContext, run_id: str) -> str:
    """A fresh token, stamped on the run's fence."""
    tok = token()
    stamp(fence, run_id, tok)
    return tok


def claimed(fence: StoreContext, run_id: str) -> str:
    """A fresh token, stamped and claimed (the claim must win)."""
    tok = stamped(fence, run_id)
    assert claim(fence, run_id, tok)
    return tok


def pending(runs: RunStore, run_id: str) -> PendingState | None:
    view = runs.get(run_id)
    assert view is not None
    return None if view.pending_effect is None else view.pending_effect.state


def settle(parts: WorkerResources, run_id: str, status: RunStatus) -> None:
    settled = Settle(parts.ctx).settle(SettleRequest(
        run_id=run_id,
        sequence=90,
        reason=TerminationReason.CANCELLED
        if status is RunStatus.CANCELLED
        else TerminationReason.INTERNAL_ERROR,
        status=status,
        outcome=Outcome.CANCELLED if status is RunStatus.CANCELLED else Outcome.FAILED,
        iterations=1,
        usage=Usage(),
        error_type=None,
        privacy="full",
        budget=None,
    ))  # fmt: skip
    assert settled.applied


def record(
    parts: WorkerResources,
    run_id: str,
    tok: str,
    call: ToolCall = CALL,
    *,
    effect: str = "NON_IDEMPOTENT_WRITE",
    content: str = "Refund #1 recorded.",
    key: str | None = None,
) -> None:
    """What the write activity does after the effect: step, ledger and fence clear at once."""
    step = ToolStep(
        run_id=run_id,
        sequence=1,
        round=1,
        call=call,
        effect=effect,
        content=content,
        is_error=False,
        privacy="full",
        idempotency_key=key if key is not None else idempotency_key(run_id, call.call_id),
    )
    ToolStepStore(parts.ctx).record(step, also=[_sql.clear_part(run_id, tok)])


def race(*fns: Callable[[], T]) -> list[T]:
    """Start every function at the same instant, each on its own connection."""
    gate = threading.Barrier(len(fns))

    def go(fn: Callable[[], T]) -> T:
        gate.wait(timeout=10)
        return fn()

    with ThreadPoolExecutor(len(fns)) as pool:
        futures = [pool.submit(go, fn) for fn in fns]
        return [f.result(timeout=60) for f in futures]


# --- stamp ------------------------------------------------------------------------------


def test_stamp_on_a_running_run(fence: StoreContext, runs: RunStore, run_id: str) -> None:
    assert stamp(fence, run_id, token()) == FenceState.STAMPED
    view = runs.get(run_id)
    assert view is not None and view.pending_effect is not None
    assert (view.pending_effect.call_id, view.pending_effect.tool) == ("r1.1", "issue_refund")
    assert view.pending_effect.state is PendingState.STAMPED


@pytest.mark.parametrize("status", [RunStatus.FAILED, RunStatus.CANCELLED])
def test_stamp_requires_running(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str, status: RunStatus
) -> None:
    settle(parts, run_id, status)
    assert stamp(fence, run_id, token()) == FenceState.RUN_NOT_RUNNING
    assert pending(runs, run_id) is None


def test_stamp_of_an_unknown_run(fence: StoreContext) -> None:
    assert stamp(fence, str(uuid.uuid4()), token()) == FenceState.RUN_NOT_RUNNING


def test_stamp_is_retry_safe_with_the_same_token(fence: StoreContext, run_id: str) -> None:
    tok = token()
    assert stamp(fence, run_id, tok) == FenceState.STAMPED
    # A retried stamp activity whose first attempt landed: the same fence, still claimable.
    assert stamp(fence, run_id, tok) == FenceState.STAMPED
    assert claim(fence, run_id, tok)


def test_second_call_while_one_is_pending_is_busy(
    fence: StoreContext, runs: RunStore, run_id: str
) -> None:
    first = token()
    assert stamp(fence, run_id, first) == FenceState.STAMPED
    assert stamp(fence, run_id, token(), OTHER) == FenceState.BUSY
    view = runs.get(run_id)
    assert view is not None and view.pending_effect is not None
    assert view.pending_effect.call_id == CALL.call_id
    assert claim(fence, run_id, first)
    assert stamp(fence, run_id, token(), OTHER) == FenceState.BUSY  # claimed: still busy


def test_restamp_of_an_unclaimed_call_replaces_the_token(fence: StoreContext, run_id: str) -> None:
    """A reset re-stamps the same call: the earlier execution's token can no longer claim."""
    old, new = token(), token()
    assert stamp(fence, run_id, old) == FenceState.STAMPED
    assert stamp(fence, run_id, new) == FenceState.STAMPED
    assert not claim(fence, run_id, old)
    assert claim(fence, run_id, new)


def test_restamp_of_a_claimed_call_is_refused(
    fence: StoreContext, runs: RunStore, run_id: str
) -> None:
    claimed(fence, run_id)
    assert stamp(fence, run_id, token()) == FenceState.INTERRUPTED
    assert pending(runs, run_id) is PendingState.EXECUTING


# --- claim ------------------------------------------------------------------------------


def test_claim_works_once_per_token(fence: StoreContext, runs: RunStore, run_id: str) -> None:
    tok = stamped(fence, run_id)
    assert not claim(fence, run_id, token())  # a token never issued
    assert claim(fence, run_id, tok)
    assert pending(runs, run_id) is PendingState.EXECUTING
    assert not claim(fence, run_id, tok)


def test_concurrent_claims_of_one_token_have_one_winner(fence: StoreContext, run_id: str) -> None:
    tok = stamped(fence, run_id)
    wins = race(*[lambda: claim(fence, run_id, tok)] * 6)
    assert sorted(wins) == [False] * 5 + [True]


def test_claim_refused_after_the_run_is_cancelled(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str
) -> None:
    tok = stamped(fence, run_id)
    settle(parts, run_id, RunStatus.CANCELLED)
    assert not claim(fence, run_id, tok)
    assert pending(runs, run_id) is None  # an unclaimed fence dies with the run


def test_claim_refused_on_a_run_not_running_even_with_its_fence(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str
) -> None:
    """The status guard alone refuses: e.g. a run suspended for approval meanwhile."""
    tok = stamped(fence, run_id)
    with parts.ctx.sessions.begin() as s:
        s.execute(
            update(RunRow)
            .where(RunRow.id == run_id)
            .values(status=RunStatus.WAITING_FOR_APPROVAL.value)
        )
    assert not claim(fence, run_id, tok)
    assert pending(runs, run_id) is PendingState.STAMPED
    # Ended, so no later test's inbox (the session's database) lists a run waiting with no
    # pending turn.
    settle(parts, run_id, RunStatus.CANCELLED)


def test_a_claimed_fence_outlives_the_settle(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str
) -> None:
    claimed(fence, run_id)
    settle(parts, run_id, RunStatus.CANCELLED)
    assert pending(runs, run_id) is PendingState.EXECUTING  # evidence of a write in flight


# --- resolve ----------------------------------------------------------------------------


def test_resolve_stamped_is_never_claimed_and_voids_the_fence(
    fence: StoreContext, runs: RunStore, run_id: str
) -> None:
    tok = stamped(fence, run_id)
    assert resolve(fence, run_id, tok) == FenceState.NEVER_CLAIMED
    assert pending(runs, run_id) is None
    assert not claim(fence, run_id, tok)  # a late claim of the void fence
    # The write may be scheduled again, under a fresh token.
    again = token()
    assert stamp(fence, run_id, again) == FenceState.STAMPED
    assert claim(fence, run_id, again)


def test_resolve_executing_is_interrupted_with_outcome_unknown(
    fence: StoreContext, runs: RunStore, run_id: str
) -> None:
    tok = claimed(fence, run_id)
    assert resolve(fence, run_id, tok) == FenceState.INTERRUPTED
    assert pending(runs, run_id) is PendingState.OUTCOME_UNKNOWN
    # Retried resolve: the same verdict; the call can be neither re-stamped nor claimed.
    assert resolve(fence, run_id, tok) == FenceState.INTERRUPTED
    assert stamp(fence, run_id, token()) == FenceState.INTERRUPTED
    assert not claim(fence, run_id, tok)
    assert pending(runs, run_id) is PendingState.OUTCOME_UNKNOWN


def test_resolve_recorded_is_already_done(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str
) -> None:
    tok = claimed(fence, run_id)
    record(parts, run_id, tok)
    assert pending(runs, run_id) is None  # cleared in the record transaction
    assert resolve(fence, run_id, tok) == FenceState.ALREADY_DONE
    # A duplicate execution of the same call: its stamp learns the write is done, and a
    # stale token cannot claim anything.
    assert stamp(fence, run_id, token()) == FenceState.ALREADY_DONE
    assert not claim(fence, run_id, tok)
    assert pending(runs, run_id) is None


def test_recorded_call_is_done_even_after_the_run_settled(
    fence: StoreContext, parts: WorkerResources, run_id: str
) -> None:
    """A reset of a COMPLETED run re-stamps its finished write: done, not "not running"."""
    tok = claimed(fence, run_id)
    record(parts, run_id, tok)
    settle(parts, run_id, RunStatus.FAILED)
    assert stamp(fence, run_id, token()) == FenceState.ALREADY_DONE


def test_resolve_without_a_fence_is_never_claimed(fence: StoreContext, run_id: str) -> None:
    """The stamp itself never landed: nothing can have run."""
    assert resolve(fence, run_id, token()) == FenceState.NEVER_CLAIMED


def test_claim_racing_resolve_never_yields_never_claimed_for_a_claimed_write(
    fence: StoreContext, runs: RunStore, parts: WorkerResources
) -> None:
    """A slow write claiming just as the workflow resolves its timeout: exactly one wins,
    and a won claim is always reported as interrupted, never as safe to re-run."""
    # Which side wins is up to the scheduler; in practice both do over ten passes.
    for _ in range(10):
        rid = begin_run(fence, profile="auto", prompt="p")
        tok = stamped(fence, rid)
        claimed, verdict = race(
            lambda: claim(fence, rid, tok),  # noqa: B023 (joined in this pass)
            lambda: resolve(fence, rid, tok),  # noqa: B023
        )
        assert (claimed, verdict) in {
            (True, FenceState.INTERRUPTED),
            (False, FenceState.NEVER_CLAIMED),
        }
        expected = PendingState.OUTCOME_UNKNOWN if claimed else None
        assert pending(runs, rid) is expected


def test_a_refused_claim_says_whether_the_run_exists(fence: StoreContext, run_id: str) -> None:
    tok = stamped(fence, run_id)
    assert _sql.claim(fence, run_id, token()) is ErrorType.FENCE_REJECTED
    assert _sql.claim(fence, str(uuid.uuid4()), tok) is ErrorType.RUN_NOT_FOUND


# --- void, in the settle's transaction --------------------------------------------------


def test_void_empties_a_stamped_fence_and_keeps_a_claimed_one(
    fence: StoreContext, runs: RunStore, run_id: str
) -> None:
    """What the settle's own UPDATE carries: an unclaimed write never ran, a claimed one
    stays as evidence."""
    voided = update(RunRow).where(RunRow.id == run_id).values(void_unclaimed())
    stamp(fence, run_id, token())
    with fence.sessions.begin() as s:
        s.execute(voided)
    assert pending(runs, run_id) is None
    claimed(fence, run_id)
    with fence.sessions.begin() as s:
        s.execute(voided)
    assert pending(runs, run_id) is PendingState.EXECUTING


# --- round trips ------------------------------------------------------------------------


def test_a_recorded_write_is_one_round_trip_on_postgres(parts: WorkerResources) -> None:
    """A write's record (message, event, ledger row, fence clear) and the fence's stamp and
    claim: each one statement, with no BEGIN or COMMIT (on SQLite the record is one INSERT
    into the view of migration 0021, whose trigger writes the rows and the clear)."""
    run_id = _run(parts)
    key = f"{run_id}:r1.1"
    call = ToolCall(call_id="r1.1", name="t", arguments={})
    with _statements(parts) as sent:
        stamp = _sql.stamp(parts.ctx, _request(run_id, "tok", call), key)
        assert stamp == "stamped"
        assert _sql.claim(parts.ctx, run_id, "tok") is None
        record(parts, run_id, "tok", call, effect="non_idempotent_write", content="ok", key=key)
    if backend() == "postgres":
        assert sent == ["UPDATE", "UPDATE", "WITH"]
    else:
        assert sent == ["UPDATE", "UPDATE", "INSERT"]
    with parts.ctx.sessions() as s:
        row = s.get(RunRow, run_id)
        assert row is not None and row.pending_token is None  # cleared with the record
        assert s.get(ToolResultRow, key) is not None
    assert _count(parts, EventRow, run_id) == 2


def test_a_record_clears_only_its_own_token(
    fence: StoreContext, runs: RunStore, parts: WorkerResources, run_id: str
) -> None:
    """The record's clear (on SQLite, in the trigger of migration 0021) empties the fence
    only for the token that claimed it: a record under another token leaves it claimed,
    its step recorded all the same."""
    mine = claimed(fence, run_id)
    record(parts, run_id, token())
    assert pending(runs, run_id) is PendingState.EXECUTING
    with parts.ctx.sessions() as s:
        row = s.get(RunRow, run_id)
        assert row is not None and row.pending_token == mine
    record(parts, run_id, mine)
    assert pending(runs, run_id) is None
