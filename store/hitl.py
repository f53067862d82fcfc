"""Pausing a run for a human and resuming it: guarded transitions with their events."""

from typing import Any

from sqlalchemy import select

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import EventKind, Outcome, RunStatus
from agentrt.contracts.messages import Message, Usage
from agentrt.store import attest
from agentrt.store.context import StoreContext, utcnow
from agentrt.store.rows import RunRow
from agentrt.store.runs import RunStore, event_row, insert_event
from agentrt.store.sealed import RUN_PENDING_APPROVAL
from agentrt.store.transitions import move


def _progress(iterations: int, usage: Usage | None) -> dict[str, int]:
    """A waiting run's iterations and tokens so far (the settle writes the final sums)."""
    if usage is None:
        return {}
    return {
        "iterations": iterations,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }


class HitlStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def _event(
        self, run_id: str, sequence: int, kind: EventKind, round: int, payload: dict[str, Any],
        privacy: str,
    ) -> dict[str, Any]:  # fmt: skip
        return event_row(self._ctx.sealer, run_id, sequence, kind, round, payload, privacy)

    def suspend(
        self,
        *,
        run_id: str,
        sequence: int,
        pending: PendingApproval,
        privacy: str,
        iterations: int = 0,
        usage: Usage | None = None,
    ) -> RunStatus | None:
        """RUNNING → WAITING_FOR_APPROVAL with the pending turn. Returns the status the run
        has afterwards; anything but WAITING_FOR_APPROVAL means the suspension was refused
        (e.g. the run was cancelled first) and nothing was written."""
        sealed = RUN_PENDING_APPROVAL.seal(self._ctx.sealer, pending.model_dump_json(), run_id)
        with self._ctx.sessions.begin() as s:
            moved = move(
                s, run_id, frm=RunStatus.RUNNING, to=RunStatus.WAITING_FOR_APPROVAL,
                sequence=sequence, outcome=Outcome.AWAITING_APPROVAL.value,
                pending_approval=sealed, waiting_since=utcnow(), **_progress(iterations, usage),
            )  # fmt: skip
            if not moved.applied:
                return moved.status
            self._ctx.faults("suspend.before_commit")
            payload: dict[str, Any] = {
                "turn_digest": pending.turn_digest,
                "tools": [c.name for c in pending.calls],
                "tool_calls": [c.model_dump() for c in pending.calls],
            }
            kind = EventKind.APPROVAL_REQUESTED
            insert_event(s, self._event(run_id, sequence, kind, pending.round, payload, privacy))
        return RunStatus.WAITING_FOR_APPROVAL

    def resume(
        self, *, run_id: str, sequence: int, round: int, decision: ApprovalDecision, privacy: str
    ) -> RunStatus | None:
        """WAITING_FOR_APPROVAL → RUNNING, and the APPROVAL event, in one transaction: the
        decision is on record before any approved write can run (fail closed)."""
        with self._ctx.sessions.begin() as s:
            moved = move(
                s, run_id, frm=RunStatus.WAITING_FOR_APPROVAL, to=RunStatus.RUNNING,
                sequence=sequence, outcome=None, pending_approval=None, waiting_since=None,
            )  # fmt: skip
            if not moved.applied:
                return moved.status
            audit = attest.audit(self._ctx.sealer, run_id, decision)
            insert_event(
                s, self._event(run_id, sequence, EventKind.APPROVAL, round, audit, privacy)
            )
        return RunStatus.RUNNING

    def refuse_unattested(
        self, *, run_id: str, sequence: int, round: int, decision: ApprovalDecision, privacy: str
    ) -> bool:
        """True, with a DECISION_REFUSED event, when the decision's attestation is missing or
        does not open as exactly this decision; False (writing nothing) when it is attested.
        The run is not moved: it keeps waiting for a decision that counts."""
        if attest.authenticated(self._ctx.sealer, run_id, decision):
            return False
        payload = attest.refusal(decision)
        with self._ctx.sessions.begin() as s:
            insert_event(
                s,
                self._event(run_id, sequence, EventKind.DECISION_REFUSED, round, payload, privacy),
            )
        return True

    def await_input(
        self,
        *,
        run_id: str,
        sequence: int,
        round: int,
        privacy: str,
        iterations: int = 0,
        usage: Usage | None = None,
    ) -> RunStatus | None:
        """RUNNING → WAITING_FOR_INPUT: the model asked the user for more information."""
        with self._ctx.sessions.begin() as s:
            moved = move(
                s, run_id, frm=RunStatus.RUNNING, to=RunStatus.WAITING_FOR_INPUT,
                sequence=sequence, outcome=Outcome.AWAITING_INPUT.value, waiting_since=utcnow(),
                **_progress(iterations, usage),
            )  # fmt: skip
            if not moved.applied:
                return moved.status
            insert_event(
                s, self._event(run_id, sequence, EventKind.INPUT_REQUESTED, round, {}, privacy)
            )
        return RunStatus.WAITING_FOR_INPUT

    def add_input(
        self, *, run_id: str, sequence: int, round: int, message: InputMessage, privacy: str
    ) -> RunStatus | None:
        """WAITING_FOR_INPUT → RUNNING with the follow-up appended to the transcript."""
        with self._ctx.sessions.begin() as s:
            moved = move(
                s, run_id, frm=RunStatus.WAITING_FOR_INPUT, to=RunStatus.RUNNING,
                sequence=sequence, outcome=None, waiting_since=None,
            )  # fmt: skip
            if not moved.applied:
                return moved.status
            RunStore(self._ctx).append_message(
                s, run_id, sequence, Message(role="user", content=message.text)
            )
            audit = {
                "sent_by": message.sent_by,
                "message_id": message.message_id,
                "content": message.text,
            }
            insert_event(s, self._event(run_id, sequence, EventKind.INPUT, round, audit, privacy))
        return RunStatus.RUNNING

    def pending(self, run_id: str) -> PendingApproval | None:
        with self._ctx.sessions() as s:
            raw = s.scalar(select(RunRow.pending_approval).where(RunRow.id == run_id))
        if raw is None:
            return None
        return PendingApproval.model_validate_json(
            RUN_PENDING_APPROVAL.open(self._ctx.sealer, raw, run_id)
        )
