"""The void of an interrupted write its probe found not applied (activities/fence/_sql.py),
retried: a reconcile step whose worker died after the void committed, before it reported,
runs again and must find the write void already (issue 40: it answered "unknown", the run
failed with no fence and no ledger row, and the safe retry was never made). The worker
SIGKILLed there: test_reconcile_kill.py."""

from agentrt.activities.fence import _sql
from agentrt.contracts.enums import PendingState, RunStatus
from agentrt.contracts.ids import idempotency_key
from agentrt.store.db.context import StoreContext
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.fence.test_fence_sql import (
    CALL,
    claimed,
    pending,
    record,
    resolve,
    settle,
    stamp,
    token,
)


def _void(fence: StoreContext, run_id: str, tok: str) -> bool:
    return _sql.void_unknown(fence, run_id, tok, idempotency_key(run_id, CALL.call_id))


def _was_voided(fence: StoreContext, run_id: str, tok: str) -> bool:
    return _sql.was_voided(fence, run_id, tok, idempotency_key(run_id, CALL.call_id))


def _interrupted(fence: StoreContext, run_id: str) -> str:
    tok = claimed(fence, run_id)
    resolve(fence, run_id, tok)
    return tok


def test_a_void_retried_after_it_committed_is_a_void_again(
    fence: StoreContext,
    runs: RunStore,
    run_id: str,
) -> None:
    tok = _interrupted(fence, run_id)
    assert pending(runs, run_id) is PendingState.OUTCOME_UNKNOWN
    assert not _was_voided(fence, run_id, tok)  # the fence still holds it: not void yet
    assert _void(fence, run_id, tok)
    assert pending(runs, run_id) is None
    # The step again (its worker died before reporting): the same answer, nothing changed.
    assert _was_voided(fence, run_id, tok)
    assert _void(fence, run_id, tok)
    assert pending(runs, run_id) is None
    # And the write may be stamped afresh, under the same idempotency key.
    assert stamp(fence, run_id, token()) == "stamped"


def test_an_empty_fence_that_never_held_the_token_is_not_void(
    fence: StoreContext,
    run_id: str,
) -> None:
    assert not _was_voided(fence, run_id, token())
    assert not _void(fence, run_id, token())


def test_a_void_superseded_or_recorded_is_never_taken_for_this_one(
    fence: StoreContext,
    parts: WorkerResources,
    run_id: str,
) -> None:
    tok = _interrupted(fence, run_id)
    assert _void(fence, run_id, tok)
    again = claimed(fence, run_id)  # the re-execution: its stamp replaces the mark
    assert not _was_voided(fence, run_id, tok)
    record(parts, run_id, again)
    assert not _void(fence, run_id, tok)
    assert not _was_voided(fence, run_id, tok)


def test_a_fence_kept_as_evidence_on_an_ended_run_is_never_voided(
    fence: StoreContext,
    runs: RunStore,
    parts: WorkerResources,
    run_id: str,
) -> None:
    tok = _interrupted(fence, run_id)
    settle(parts, run_id, RunStatus.FAILED)
    assert not _void(fence, run_id, tok)
    assert not _was_voided(fence, run_id, tok)
    assert pending(runs, run_id) is PendingState.OUTCOME_UNKNOWN  # the evidence stays


def test_a_void_on_a_run_that_ended_after_it_is_not_acted_on(
    fence: StoreContext,
    parts: WorkerResources,
    run_id: str,
) -> None:
    """Voided, then the run was cancelled before the step reported: its retry finds the
    run ended and answers nothing the run would act on."""
    tok = _interrupted(fence, run_id)
    assert _void(fence, run_id, tok)
    settle(parts, run_id, RunStatus.CANCELLED)
    assert not _void(fence, run_id, tok)
