"""The pauses' pure state: the approval gate (which decisions the workflow accepts), the
input pause (whether it takes a follow-up message, and which are on record) and the
reconcile gate (which answer on an interrupted write it takes). Pure,
unit-testable; the pauses themselves and their handlers are in workflows/pauses.py."""

import hmac
from dataclasses import dataclass, field
from datetime import datetime

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import (
    ApprovalDecision,
    DecisionRefusal,
    PendingApproval,
    refusal_sentence,
)
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.reconcile_answer import ReconcileAnswer

REJECTED_KEPT = 20


class Refusal:
    """`ApplicationError.type` values of a refused decision (validator and facade)."""

    NOT_AWAITING = ErrorType.NOT_AWAITING_APPROVAL.value
    STALE_TURN = ErrorType.STALE_TURN.value
    ALREADY_DECIDED = ErrorType.ALREADY_DECIDED.value
    SELF_APPROVAL = ErrorType.SELF_APPROVAL.value
    UNATTESTED = ErrorType.UNATTESTED_DECISION.value


@dataclass
class ApprovalGate:
    initiator: str = ""
    four_eyes: bool = False
    pending: PendingApproval | None = None
    decision: ApprovalDecision | None = None
    decided: set[str] = field(default_factory=set)
    closed: bool = False  # the run ended: no decision is accepted any more
    # Who approved each round's turn (its calls), by round: a re-execution of one of its
    # writes after a person's "not applied" needs another person, under four-eyes.
    approvers: dict[int, str] = field(default_factory=dict)
    # Accepted decisions the resume activity then refused (no valid attestation), the last
    # few, by identity: a `decide` update waiting on its own decision learns it was refused.
    rejected: list[ApprovalDecision] = field(default_factory=list)

    def open(self, pending: PendingApproval) -> None:
        self.pending = pending
        self.decision = None

    def check(self, d: ApprovalDecision) -> str | None:
        """None if the decision may be accepted, else the refusal type. Changes nothing."""
        if d.turn_digest in self.decided:
            return Refusal.ALREADY_DECIDED
        if self.closed or self.pending is None:
            return Refusal.NOT_AWAITING
        # As bytes: compare_digest raises TypeError on a str with non-ASCII characters, and
        # a decision's digest is whatever the sender typed.
        if not hmac.compare_digest(d.turn_digest.encode(), self.pending.turn_digest.encode()):
            return Refusal.STALE_TURN
        if self.decision is not None:
            return Refusal.ALREADY_DECIDED
        # Four-eyes binds approvals only: the initiator may always deny.
        if self.four_eyes and d.approved and d.decided_by == self.initiator:
            return Refusal.SELF_APPROVAL
        return None

    def accept(self, d: ApprovalDecision) -> bool:
        if self.check(d) is not None:
            return False
        self.decision = d
        self.decided.add(d.turn_digest)
        return True

    def take(self, d: ApprovalDecision, *, run_id: str, at: datetime) -> DecisionRefusal | None:
        """Accept the decision (None), or describe why it is refused, changing nothing."""
        refusal = self.check(d)
        if refusal is None and self.accept(d):
            return None
        return self.refusal(d, refusal or Refusal.ALREADY_DECIDED, run_id=run_id, at=at)

    def refusal(
        self, d: ApprovalDecision, kind: str, *, run_id: str, at: datetime
    ) -> DecisionRefusal:
        """A refused decision as the `refused_decisions` query shows it."""
        message = refusal_sentence(
            kind,
            run_id=run_id,
            turn_digest=d.turn_digest,
            decided_by=d.decided_by,
            pending_digest=self.pending.turn_digest if self.pending is not None else None,
        )
        return DecisionRefusal(
            refusal=kind, message=message, decided_by=d.decided_by, approved=d.approved,
            turn_digest=d.turn_digest, at=at,
        )  # fmt: skip

    def reject(self, d: ApprovalDecision) -> None:
        """The accepted decision did not count (the activity refused it): the turn is open
        again for another decision, as if this one had never come."""
        if self.decision is d:
            self.decision = None
            self.decided.discard(d.turn_digest)
        self.rejected = [*self.rejected, d][-REJECTED_KEPT:]

    def was_rejected(self, d: ApprovalDecision) -> bool:
        return any(r is d for r in self.rejected)

    def close_turn(self) -> None:
        self.pending = None
        self.decision = None


@dataclass
class InputPause:
    """The pause for the remote user's follow-up: whether the workflow takes a message now,
    and which messages are on record."""

    # Set before the pause commits, like the approval gate: a client that sees the run
    # WAITING_FOR_INPUT in the store and answers at once finds the workflow ready.
    waiting: bool = False
    message: InputMessage | None = None  # taken, not yet recorded
    recorded: set[str] = field(default_factory=set)  # message ids on record
    # Taken messages the recording activity then refused (no valid attestation of their
    # sender), the last few, by identity: a `submit_input` waiting on its own message
    # learns it was refused, and the pause takes another.
    rejected: list[InputMessage] = field(default_factory=list)

    def open(self) -> None:
        self.waiting, self.message = True, None

    def accepts(self) -> bool:
        """One message per pause: the first one taken is the one recorded."""
        return self.waiting and self.message is None

    def take(self, message: InputMessage) -> bool:
        """Whether the pause took `message`. The update's validator checks `accepts` first,
        and the SDK (1.35) runs a validator and its handler in one task with nothing to
        yield between them, so of two follow-ups in one activation the second is refused by
        its validator (tests/pauses/test_input.py). This keeps the handler right should
        anything come to yield in between (an interceptor, another SDK version): it refuses
        then, rather than overwrite the message already taken."""
        if not self.accepts():
            return False
        self.message = message
        return True

    def reject(self, message: InputMessage) -> None:
        """The taken message did not count: the pause takes another, as if it never came."""
        if self.message is message:
            self.message = None
        self.rejected = [*self.rejected, message][-REJECTED_KEPT:]

    def was_rejected(self, message: InputMessage) -> bool:
        return any(r is message for r in self.rejected)

    def close(self, recorded: InputMessage | None = None) -> None:
        """The pause is over: `recorded`, if given, is on record."""
        self.waiting, self.message = False, None
        if recorded is not None:
            self.recorded.add(recorded.message_id)


@dataclass
class ReconcileGate:
    """The wait for a person's answer on an interrupted write (workflows/reconciliation.py):
    which call and fence it is for, the answer taken, the fences answered on record."""

    call_id: str | None = None
    fence: str | None = None
    answer: ReconcileAnswer | None = None
    answered: set[str] = field(default_factory=set)  # fences whose answer is on record
    closed: bool = False  # the run ended: no answer is taken any more
    # Answers taken that the recording activity then refused (no valid attestation).
    rejected: list[ReconcileAnswer] = field(default_factory=list)
    # Four-eyes (the profile's): the run's initiator, and who approved the waited write.
    four_eyes: bool = False
    initiator: str = ""
    approver: str | None = None

    def open(self, call_id: str, fence: str, approver: str | None = None) -> None:
        self.call_id, self.fence, self.answer, self.approver = call_id, fence, None, approver

    def check(self, a: ReconcileAnswer) -> str | None:
        """None if the answer may be taken, else the refusal (an ErrorType value)."""
        if a.fence in self.answered or (a.fence == self.fence and self.answer is not None):
            return ErrorType.ALREADY_RECONCILED.value
        if self.closed or self.call_id is None:
            return ErrorType.NOT_AWAITING_RECONCILIATION.value
        if a.call_id != self.call_id or a.fence != self.fence:
            return ErrorType.STALE_RECONCILIATION.value
        return self.four_eyes_refusal(a)

    def four_eyes_refusal(self, a: ReconcileAnswer) -> str | None:
        """Under four-eyes, "not applied" lets the write run again (or gives the model an
        error in its place): the run's initiator may not say it, and a re-execution needs
        someone other than the person who approved the write. "Applied" and "give up"
        run nothing: anyone may say them, as anyone may deny."""
        if not self.four_eyes or a.answer != "not_applied":
            return None
        if a.answered_by == self.initiator:
            return ErrorType.SELF_RECONCILIATION.value
        if a.then == "retry" and self.approver is not None and a.answered_by == self.approver:
            return ErrorType.APPROVER_RECONCILIATION.value
        return None

    def take(self, a: ReconcileAnswer) -> bool:
        if self.check(a) is not None:
            return False
        self.answer = a
        return True

    def reject(self, a: ReconcileAnswer) -> None:
        """The taken answer did not count: the wait takes another one."""
        if self.answer is a:
            self.answer = None
        self.rejected = [*self.rejected, a][-REJECTED_KEPT:]

    def was_rejected(self, a: ReconcileAnswer) -> bool:
        return any(r is a for r in self.rejected)

    def done(self) -> None:
        """The answer is on record: the wait is over."""
        if self.fence is not None:
            self.answered.add(self.fence)
        self.call_id = self.fence = self.answer = None
