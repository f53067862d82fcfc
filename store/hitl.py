"""Suspension and resumption of a run around a human decision: guarded transitions."""

from typing import Any

from sqlalchemy import select, update

from contracts.a2a import InputMessage
from contracts.approval import ApprovalDecision, PendingApproval
from contracts.enums import EventKind, Outcome, RunStatus
from contracts.messages import Message
from store.context import StoreContext, rowcount, utcnow
from store.rows import EventRow, RunRow
from store.runs import RunStore


class HitlStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def suspend(
        self, *, run_id: str, sequence: int, pending: PendingApproval, privacy: str
    ) -> RunStatus | None:
        """RUNNING → WAITING_FOR_APPROVAL with the pending turn. Returns the status the run
        has afterwards; anything but WAITING_FOR_APPROVAL means the suspension was refused
        (e.g. the run was cancelled first) and nothing was written."""
        sealed = self._ctx.sealer.seal(
            pending.model_dump_json(), table="agent_run", column="pending_approval", row=run_id
        )
        with self._ctx.sessions.begin() as s:
            now = utcnow()
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status == RunStatus.RUNNING.value)
                .values(
                    status=RunStatus.WAITING_FOR_APPROVAL.value,
                    outcome=Outcome.AWAITING_APPROVAL.value,
                    pending_approval=sealed,
                    waiting_since=now,
                    updated_at=now,
                    revision=RunRow.revision + 1,
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
                if current == RunStatus.WAITING_FOR_APPROVAL.value:
                    return RunStatus.WAITING_FOR_APPROVAL  # our own suspension, retried
                return None if current is None else RunStatus(current)
            self._ctx.faults("suspend.before_commit")
            payload: dict[str, Any] = {
                "turn_digest": pending.turn_digest,
                "tools": [c.name for c in pending.calls],
                "tool_calls": [c.model_dump() for c in pending.calls],
            }
            RunStore.add_event(
                s, run_id, sequence, EventKind.APPROVAL_REQUESTED, pending.round, payload, privacy
            )
        return RunStatus.WAITING_FOR_APPROVAL

    def resume(
        self, *, run_id: str, sequence: int, round: int, decision: ApprovalDecision, privacy: str
    ) -> RunStatus | None:
        """WAITING_FOR_APPROVAL → RUNNING, and the APPROVAL event, in one transaction.

        The event is persisted before any approved write can run (fail closed). Returns the
        status afterwards; anything but RUNNING means the run left the wait another way.
        """
        with self._ctx.sessions.begin() as s:
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value)
                .values(
                    status=RunStatus.RUNNING.value,
                    outcome=None,
                    pending_approval=None,
                    waiting_since=None,
                    updated_at=utcnow(),
                    revision=RunRow.revision + 1,
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
                recorded = s.scalar(
                    select(EventRow.id).where(
                        EventRow.run_id == run_id, EventRow.sequence == sequence
                    )
                )
                if current == RunStatus.RUNNING.value and recorded is not None:
                    return RunStatus.RUNNING  # already resumed by an earlier attempt
                return None if current is None else RunStatus(current)
            RunStore.add_event(
                s,
                run_id,
                sequence,
                EventKind.APPROVAL,
                round,
                {
                    "approved": decision.approved,
                    "decided_by": decision.decided_by,
                    "turn_digest": decision.turn_digest,
                },
                privacy,
            )
        return RunStatus.RUNNING

    def pending(self, run_id: str) -> PendingApproval | None:
        with self._ctx.sessions() as s:
            raw = s.scalar(select(RunRow.pending_approval).where(RunRow.id == run_id))
        return None if raw is None else self._open(run_id, raw)

    def _open(self, run_id: str, raw: str) -> PendingApproval:
        return PendingApproval.model_validate_json(
            self._ctx.sealer.open(raw, table="agent_run", column="pending_approval", row=run_id)
        )

    def await_input(
        self, *, run_id: str, sequence: int, round: int, privacy: str
    ) -> RunStatus | None:
        """RUNNING → WAITING_FOR_INPUT: the model asked the user for more information."""
        with self._ctx.sessions.begin() as s:
            now = utcnow()
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status == RunStatus.RUNNING.value)
                .values(
                    status=RunStatus.WAITING_FOR_INPUT.value,
                    outcome=Outcome.AWAITING_INPUT.value,
                    waiting_since=now,
                    updated_at=now,
                    revision=RunRow.revision + 1,
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
                return None if current is None else RunStatus(current)
            RunStore.add_event(s, run_id, sequence, EventKind.INPUT_REQUESTED, round, {}, privacy)
        return RunStatus.WAITING_FOR_INPUT

    def add_input(
        self, *, run_id: str, sequence: int, round: int, message: InputMessage, privacy: str
    ) -> RunStatus | None:
        """WAITING_FOR_INPUT → RUNNING with the follow-up appended to the transcript, in one
        transaction. Retry-safe."""
        with self._ctx.sessions.begin() as s:
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status == RunStatus.WAITING_FOR_INPUT.value)
                .values(
                    status=RunStatus.RUNNING.value,
                    outcome=None,
                    waiting_since=None,
                    updated_at=utcnow(),
                    revision=RunRow.revision + 1,
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
                recorded = s.scalar(
                    select(EventRow.id).where(
                        EventRow.run_id == run_id, EventRow.sequence == sequence
                    )
                )
                if current == RunStatus.RUNNING.value and recorded is not None:
                    return RunStatus.RUNNING
                return None if current is None else RunStatus(current)
            RunStore(self._ctx).append_message(
                s, run_id, sequence, Message(role="user", content=message.text)
            )
            RunStore.add_event(
                s,
                run_id,
                sequence,
                EventKind.INPUT,
                round,
                {
                    "sent_by": message.sent_by,
                    "message_id": message.message_id,
                    "content": message.text,
                },
                privacy,
            )
        return RunStatus.RUNNING
