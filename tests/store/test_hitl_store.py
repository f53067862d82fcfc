"""Guarded transitions around a decision, on the real database."""

import uuid
from datetime import UTC, datetime

from agentrt.activities.settle import Settle
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.run import FailRequest
from agentrt.store.hitl import HitlStore
from agentrt.store.runs import RunStore
from agentrt.workers.compose import Parts


def _run(parts: Parts) -> str:
    run_id = str(uuid.uuid4())
    RunStore(parts.ctx).begin(
        run_id=run_id, profile="p", snapshot="{}", prompt="hi", initiator="t", privacy="full"
    )
    return run_id


def _pending() -> PendingApproval:
    return PendingApproval(
        turn_digest="d" * 64,
        round=1,
        calls=[ToolCall(call_id="r1.1", name="issue_refund")],
        requested_at=datetime.now(UTC),
    )


def _cancel(parts: Parts, run_id: str) -> None:
    Settle(parts.ctx).settle(FailRequest(
        run_id=run_id,
        sequence=50,
        reason=TerminationReason.CANCELLED,
        status=RunStatus.CANCELLED,
        outcome=Outcome.CANCELLED,
        iterations=0,
        usage=Usage(),
        error_type=None,
        privacy="full",
        budget=None,
    ))  # fmt: skip


def test_a_suspension_arriving_after_a_cancel_is_refused_and_the_row_stays_cancelled(
    parts: Parts,
) -> None:
    run_id = _run(parts)
    _cancel(parts, run_id)
    hitl = HitlStore(parts.ctx)
    assert (
        hitl.suspend(run_id=run_id, sequence=3, pending=_pending(), privacy="full")
        is RunStatus.CANCELLED
    )
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    assert view.pending_approval is None
    assert RunStore(parts.ctx).event_payload(run_id, 3) is None  # nothing written
    # ...and the FAILED settle that follows is refused too: terminal is terminal.
    settled = Settle(parts.ctx).settle(FailRequest(
        run_id=run_id,
        sequence=4,
        reason=TerminationReason.SUSPEND_FAILED,
        status=RunStatus.FAILED,
        outcome=Outcome.SUSPEND_FAILED,
        iterations=0,
        usage=Usage(),
        error_type=None,
        privacy="full",
        budget=None,
    ))  # fmt: skip
    assert not settled.applied and settled.status is RunStatus.CANCELLED


def test_suspend_and_resume_are_guarded_and_retry_safe(parts: Parts) -> None:
    run_id = _run(parts)
    hitl = HitlStore(parts.ctx)
    assert (
        hitl.suspend(run_id=run_id, sequence=1, pending=_pending(), privacy="full")
        is RunStatus.WAITING_FOR_APPROVAL
    )
    # a retried suspension of the same turn is not an error
    assert (
        hitl.suspend(run_id=run_id, sequence=1, pending=_pending(), privacy="full")
        is RunStatus.WAITING_FOR_APPROVAL
    )
    assert hitl.pending(run_id) == _pending().model_copy(
        update={"requested_at": hitl.pending(run_id).requested_at}
    )  # type: ignore[union-attr]
    decision = ApprovalDecision(approved=True, decided_by="bob", turn_digest="d" * 64)
    assert (
        hitl.resume(run_id=run_id, sequence=2, round=1, decision=decision, privacy="full")
        is RunStatus.RUNNING
    )
    assert (
        hitl.resume(run_id=run_id, sequence=2, round=1, decision=decision, privacy="full")
        is RunStatus.RUNNING
    )
    assert RunStore(parts.ctx).event_payload(run_id, 2) == {
        "approved": True,
        "decided_by": "unauthenticated:bob",
        "authenticated": False,
        "turn_digest": "d" * 64,
    }
    assert hitl.pending(run_id) is None
    _cancel(parts, run_id)
    assert (
        hitl.resume(run_id=run_id, sequence=9, round=1, decision=decision, privacy="full")
        is RunStatus.CANCELLED
    )


def test_inbox_lists_waiting_runs_oldest_first(parts: Parts) -> None:
    hitl = HitlStore(parts.ctx)
    first, second = _run(parts), _run(parts)
    hitl.suspend(run_id=first, sequence=1, pending=_pending(), privacy="full")
    hitl.suspend(run_id=second, sequence=1, pending=_pending(), privacy="full")
    ids = [v.run_id for v in RunStore(parts.ctx).inbox(limit=10_000)]
    assert ids.index(first) < ids.index(second)
    inbox_view = next(v for v in RunStore(parts.ctx).inbox(limit=10_000) if v.run_id == first)
    assert inbox_view.pending_approval is not None
    assert inbox_view.pending_approval.calls[0].name == "issue_refund"
    _cancel(parts, first)
    _cancel(parts, second)
    assert first not in [v.run_id for v in RunStore(parts.ctx).inbox(limit=10_000)]
