"""The pauses' guarded transitions (activities/pauses.py), on the real database."""

from datetime import UTC, datetime

from agentrt.activities.pauses import resume, suspend
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.pauses import ResumeRequest, SuspendRequest
from agentrt.contracts.run import Transition
from agentrt.store.runs.record import RunStore
from agentrt.store.security.attest import attest
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests._settle import settle_failed


def _run(parts: WorkerResources) -> str:
    return begin_run(parts.ctx)


def _pending() -> PendingApproval:
    return PendingApproval(
        turn_digest="d" * 64,
        round=1,
        calls=[ToolCall(call_id="r1.1", name="issue_refund")],
        requested_at=datetime.now(UTC),
    )


def _suspend(parts: WorkerResources, run_id: str, sequence: int = 1) -> Transition:
    req = SuspendRequest(run_id=run_id, sequence=sequence, pending=_pending(), privacy="full")
    return suspend(parts.ctx, req)


def _resume(
    parts: WorkerResources, run_id: str, sequence: int, decision: ApprovalDecision
) -> Transition:
    req = ResumeRequest(
        run_id=run_id, sequence=sequence, round=1, decision=decision, privacy="full",
        attested_only=False,
    )  # fmt: skip
    return resume(parts.ctx, req)[0]


def _pending_of(parts: WorkerResources, run_id: str) -> PendingApproval | None:
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None
    return view.pending_approval


def _cancel(parts: WorkerResources, run_id: str) -> None:
    settle_failed(
        parts.ctx,
        run_id,
        sequence=50,
        reason=TerminationReason.CANCELLED,
        status=RunStatus.CANCELLED,
        outcome=Outcome.CANCELLED,
    )


def test_a_suspension_arriving_after_a_cancel_is_refused_and_the_row_stays_cancelled(
    parts: WorkerResources,
) -> None:
    run_id = _run(parts)
    _cancel(parts, run_id)
    assert _suspend(parts, run_id, 3) == Transition(applied=False, status=RunStatus.CANCELLED)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    assert view.pending_approval is None
    assert RunStore(parts.ctx).event_payload(run_id, 3) is None  # nothing written
    # ...and the FAILED settle that follows is refused too: terminal is terminal.
    settled = settle_failed(
        parts.ctx,
        run_id,
        sequence=4,
        reason=TerminationReason.SUSPEND_FAILED,
        outcome=Outcome.SUSPEND_FAILED,
    )
    assert not settled.applied and settled.status is RunStatus.CANCELLED


def test_suspend_and_resume_are_guarded_and_retry_safe(parts: WorkerResources) -> None:
    run_id = _run(parts)
    waiting = Transition(applied=True, status=RunStatus.WAITING_FOR_APPROVAL)
    assert _suspend(parts, run_id) == waiting
    # a retried suspension of the same turn is not an error
    assert _suspend(parts, run_id) == waiting
    assert _pending_of(parts, run_id) == _pending().model_copy(
        update={"requested_at": _pending_of(parts, run_id).requested_at}  # type: ignore[union-attr]
    )
    decision = ApprovalDecision(approved=True, decided_by="bob", turn_digest="d" * 64)
    running = Transition(applied=True, status=RunStatus.RUNNING)
    assert _resume(parts, run_id, 2, decision) == running
    assert _resume(parts, run_id, 2, decision) == running
    assert RunStore(parts.ctx).event_payload(run_id, 2) == {
        "approved": True,
        "decided_by": "unauthenticated:bob",
        "authenticated": False,
        "turn_digest": "d" * 64,
    }
    assert _pending_of(parts, run_id) is None
    _cancel(parts, run_id)
    assert _resume(parts, run_id, 9, decision) == Transition(
        applied=False, status=RunStatus.CANCELLED
    )


def test_inbox_lists_waiting_runs_oldest_first(parts: WorkerResources) -> None:
    first, second = _run(parts), _run(parts)
    _suspend(parts, first)
    _suspend(parts, second)
    ids = [v.run_id for v in RunStore(parts.ctx).inbox(limit=10_000)]
    assert ids.index(first) < ids.index(second)
    inbox_view = next(v for v in RunStore(parts.ctx).inbox(limit=10_000) if v.run_id == first)
    assert inbox_view.pending_approval is not None
    assert inbox_view.pending_approval.calls[0].name == "issue_refund"
    _cancel(parts, first)
    _cancel(parts, second)
    assert first not in [v.run_id for v in RunStore(parts.ctx).inbox(limit=10_000)]


def test_an_unattested_decision_is_refused_on_record_and_the_run_keeps_waiting(
    parts: WorkerResources,
) -> None:
    """Where attested decisions are required, the resume refuses a decision whose seal does
    not open (a DECISION_REFUSED event), moves nothing, and ends no wait; the same decision
    sealed by the store's key then resumes the run and reports the wait it ended."""
    run_id = _run(parts)
    _suspend(parts, run_id)
    decision = ApprovalDecision(
        approved=True, decided_by="bob", turn_digest="d" * 64, attestation="forged"
    )
    req = ResumeRequest(run_id=run_id, sequence=2, round=1, decision=decision, privacy="full")
    refused, waited = resume(parts.ctx, req)
    assert refused == Transition(
        applied=False, status=RunStatus.WAITING_FOR_APPROVAL, refusal="UnattestedDecision"
    )
    assert waited is None
    assert RunStore(parts.ctx).status(run_id) is RunStatus.WAITING_FOR_APPROVAL
    assert RunStore(parts.ctx).event_payload(run_id, 2) == {
        "refusal": "UnattestedDecision",
        "approved": True,
        "decided_by": "unauthenticated:bob",
        "attestation": "invalid",
        "turn_digest": "d" * 64,
    }
    seal = attest(parts.ctx.sealer, run_id, principal="bob", approved=True, turn_digest="d" * 64)
    attested = decision.model_copy(update={"attestation": seal})
    sealed = req.model_copy(update={"sequence": 3, "decision": attested})
    resumed, waited = resume(parts.ctx, sealed)
    assert resumed == Transition(applied=True, status=RunStatus.RUNNING)
    assert waited is not None and 0 <= waited < 60
    assert RunStore(parts.ctx).event_payload(run_id, 3) == {
        "approved": True,
        "decided_by": "bob",
        "authenticated": True,
        "turn_digest": "d" * 64,
    }
    # A retried resume finds the run RUNNING: it reports it, and ends no wait again.
    assert resume(parts.ctx, sealed) == (Transition(applied=True, status=RunStatus.RUNNING), None)
