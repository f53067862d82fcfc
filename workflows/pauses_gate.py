"""The pauses' three kinds of the one gate (workflows/gate.py), pure and unit-testable: the
approval gate (which decisions the workflow accepts), the input pause (whether it takes a
follow-up message, and which are on record) and the reconcile gate (which answer on an
interrupted write it takes). The one update path that feeds them is workflows/answers.py;
the pauses themselves, workflows/pauses.py and workflows/reconciliation.py."""

import hmac
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import (
    REASON_REQUIRED,
    ApprovalDecision,
    DecisionRefusal,
    PendingApproval,
    reason_missing,
    refusal_sentence,
)
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.policy import is_policy_decider
from agentrt.contracts.reconcile_answer import ReconcileAnswer
from agentrt.workflows.gate import REJECTED_KEPT, Gate, Refused


class Refusal:
    """`ApplicationError.type` values of a refused decision (validator and facade)."""

    NOT_AWAITING = ErrorType.NOT_AWAITING_APPROVAL.value
    STALE_TURN = ErrorType.STALE_TURN.value
    ALREADY_DECIDED = ErrorType.ALREADY_DECIDED.value
    SELF_APPROVAL = ErrorType.SELF_APPROVAL.value
    SAME_APPROVER = ErrorType.SAME_APPROVER.value
    POLICY_DECIDER = ErrorType.POLICY_DECIDER.value
    UNATTESTED = ErrorType.UNATTESTED_DECISION.value


@dataclass
class ApprovalGate(Gate[ApprovalDecision]):
    """Decisions on a suspended turn: the pending turn, the turns decided and on record,
    four-eyes."""

    noun: ClassVar[str] = "decision"
    payload: ClassVar[str] = "a decision"
    twice: ClassVar[str] = Refusal.ALREADY_DECIDED
    unattested: ClassVar[str] = Refusal.UNATTESTED
    ended: ClassVar[Refused] = Refused(
        ErrorType.NOT_AWAITING_APPROVAL.value, "the run ended before the decision was recorded"
    )

    initiator: str = ""
    four_eyes: bool = False
    pending: PendingApproval | None = None
    decided: set[str] = field(default_factory=set)
    recorded: set[str] = field(default_factory=set)  # digests whose decision is persisted
    # Who approved each round's turn (its calls), by round: a re-execution of one of its
    # writes after a person's "not applied" needs another person, under four-eyes.
    approvers: dict[int, str] = field(default_factory=dict)
    # Where a policy asks for N people: who approved the pending turn so far (each
    # approval on record), and how many the turn needs; the decisions on record by identity.
    approved_by: set[str] = field(default_factory=set)
    needed: int = 1
    partial: list[ApprovalDecision] = field(default_factory=list)

    @property
    def decision(self) -> ApprovalDecision | None:
        return self.taken

    def open(self, pending: PendingApproval) -> None:
        self.pending = pending
        self.taken = None

    def check(self, a: ApprovalDecision) -> str | None:
        if a.turn_digest in self.decided:
            return Refusal.ALREADY_DECIDED
        if self.closed or self.pending is None:
            return Refusal.NOT_AWAITING
        # As bytes: compare_digest raises TypeError on a str with non-ASCII characters, and
        # a decision's digest is whatever the sender typed.
        if not hmac.compare_digest(a.turn_digest.encode(), self.pending.turn_digest.encode()):
            return Refusal.STALE_TURN
        if self.taken is not None:
            return Refusal.ALREADY_DECIDED
        # Four-eyes binds approvals only: the initiator may always deny.
        if self.four_eyes and a.approved and a.decided_by == self.initiator:
            return Refusal.SELF_APPROVAL
        if a.approved and a.decided_by in self.approved_by:
            return Refusal.SAME_APPROVER
        return None

    def refused(self, a: ApprovalDecision) -> Refused | None:
        if reason_missing(a.approved, a.reason):
            # A validator runs on a new update only, never in replay: no patch is needed.
            return Refused(ErrorType.REASON_REQUIRED.value, REASON_REQUIRED)
        if is_policy_decider(a.decided_by):  # only the policy activity decides as a policy
            return Refused(Refusal.POLICY_DECIDER, f"decision refused: {Refusal.POLICY_DECIDER}")
        return super().refused(a)

    def _took(self, a: ApprovalDecision) -> None:
        self.decided.add(a.turn_digest)

    def _untook(self, a: ApprovalDecision) -> None:
        self.decided.discard(a.turn_digest)

    def over(self, a: ApprovalDecision) -> bool:
        return self.on_record(a)

    def on_record(self, a: ApprovalDecision) -> bool:
        return a.turn_digest in self.recorded or any(p is a for p in self.partial)

    def approved_partly(self, a: ApprovalDecision) -> None:
        """`a` is on record as one of the people the turn needs: the turn takes the next."""
        self.approved_by.add(a.decided_by)
        self.partial = [*self.partial, a][-REJECTED_KEPT:]
        self.taken = None
        self.decided.discard(a.turn_digest)

    def accept(self, d: ApprovalDecision) -> bool:
        return self.take(d)

    def take_signalled(
        self, d: ApprovalDecision, *, run_id: str, at: datetime
    ) -> DecisionRefusal | None:
        """The `approve` signal's take: accept the decision (None), or describe why it is
        refused, changing nothing."""
        refusal = self.check(d)
        if refusal is None and self.take(d):
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

    def close_turn(self) -> None:
        self.pending = None
        self.taken = None
        self.approved_by, self.needed = set(), 1


_NOT_WAITING = "run is not waiting for input"


@dataclass
class InputPause(Gate[InputMessage]):
    """The pause for the remote user's follow-up: whether it takes a message now, and which
    messages are on record. One message per pause: the first one taken is the one recorded."""

    noun: ClassVar[str] = "input"
    payload: ClassVar[str] = "a message"
    twice: ClassVar[str] = ErrorType.NOT_AWAITING_INPUT.value
    unattested: ClassVar[str] = ErrorType.UNATTESTED_INPUT.value
    ended: ClassVar[Refused] = Refused(
        ErrorType.NOT_AWAITING_INPUT.value, "the run ended before the input was recorded"
    )

    # Set before the pause commits, like the approval gate: a client that sees the run
    # WAITING_FOR_INPUT in the store and answers at once finds the workflow ready.
    waiting: bool = False
    recorded: set[str] = field(default_factory=set)  # message ids on record

    @property
    def message(self) -> InputMessage | None:
        return self.taken

    @property
    def unattested_message(self) -> str:
        return "input refused: no valid attestation of its sender"

    def open(self) -> None:
        self.waiting, self.taken = True, None

    def accepts(self) -> bool:
        return self.waiting and self.taken is None and not self.closed

    def check(self, a: InputMessage) -> str | None:
        return None if self.accepts() else ErrorType.NOT_AWAITING_INPUT.value

    def refused(self, a: InputMessage) -> Refused | None:
        if not self.accepts():
            return Refused(ErrorType.NOT_AWAITING_INPUT.value, _NOT_WAITING)
        if not a.attestation:  # none at all: refused here, leaving no trace in history
            return Refused(self.unattested, self.unattested_message)
        return None

    def take_refused(self, a: InputMessage) -> Refused:
        return Refused(ErrorType.NOT_AWAITING_INPUT.value, _NOT_WAITING)

    def over(self, a: InputMessage) -> bool:
        return not self.waiting

    def on_record(self, a: InputMessage) -> bool:
        return a.message_id in self.recorded

    def close(self, recorded: InputMessage | None = None) -> None:
        """The pause is over: `recorded`, if given, is on record."""
        self.waiting, self.taken = False, None
        if recorded is not None:
            self.recorded.add(recorded.message_id)


@dataclass
class ReconcileGate(Gate[ReconcileAnswer]):
    """The wait for a person's answer on an interrupted write (workflows/reconciliation.py):
    which call and fence it is for, the fences answered on record, four-eyes."""

    noun: ClassVar[str] = "answer"
    payload: ClassVar[str] = "an answer"
    twice: ClassVar[str] = ErrorType.ALREADY_RECONCILED.value
    unattested: ClassVar[str] = ErrorType.UNATTESTED_RECONCILIATION.value
    ended: ClassVar[Refused] = Refused(
        ErrorType.NOT_AWAITING_RECONCILIATION.value,
        "the run ended before the answer was recorded",
    )

    call_id: str | None = None
    fence: str | None = None
    answered: set[str] = field(default_factory=set)  # fences whose answer is on record
    # Four-eyes (the profile's): the run's initiator, and who approved the waited write.
    four_eyes: bool = False
    initiator: str = ""
    approver: str | None = None

    @property
    def answer(self) -> ReconcileAnswer | None:
        return self.taken

    def open(self, call_id: str, fence: str, approver: str | None = None) -> None:
        self.call_id, self.fence, self.taken, self.approver = call_id, fence, None, approver

    def check(self, a: ReconcileAnswer) -> str | None:
        if a.fence in self.answered or (a.fence == self.fence and self.taken is not None):
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

    def over(self, a: ReconcileAnswer) -> bool:
        return self.on_record(a)

    def on_record(self, a: ReconcileAnswer) -> bool:
        return a.fence in self.answered

    def done(self) -> None:
        """The answer is on record: the wait is over."""
        if self.fence is not None:
            self.answered.add(self.fence)
        self.call_id = self.fence = self.taken = None
