"""The pauses' one gate, pure and unit-testable: it takes one answer per wait, keeps the
last few it took that the recording activity then refused, and says when the wait for an
answer is over and how it ended. Each kind (workflows/pauses_gate.py: the approval gate,
the input pause, the reconcile gate) says only what it refuses and what is on record; the
one update path that feeds them is workflows/answers.py."""

from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.reconcile_answer import ReconcileAnswer

REJECTED_KEPT = 20
A = TypeVar("A", ApprovalDecision, InputMessage, ReconcileAnswer)


@dataclass(frozen=True)
class Refused:
    """An answer refused, as the update fails with it: an ErrorType value and a message."""

    type: str
    message: str


@dataclass
class Gate(Generic[A]):
    """The one gate. `taken`: the answer the wait took, not yet on record; `rejected`: the
    last few taken that the recording activity then refused (no valid attestation), by
    identity, so an update waiting on its own answer learns it; `closed`: the run ended (or
    the wait timed out), and no answer is taken any more."""

    noun: ClassVar[str]  # "decision", "input", "answer": the refusals' first word
    payload: ClassVar[str]  # what a payload of this kind is, for a refusal of another
    twice: ClassVar[str]  # the refusal of a second answer taken in one wait
    unattested: ClassVar[str]  # the refusal of an answer the recording activity refused
    ended: ClassVar[Refused]  # the run ended before the answer was on record

    taken: A | None = None
    closed: bool = False
    rejected: list[A] = field(default_factory=list)

    # --- what each kind says ------------------------------------------------------------

    def check(self, a: A) -> str | None:
        """None if `a` may be taken now, else the refusal (an ErrorType value)."""
        raise NotImplementedError

    def over(self, a: A) -> bool:
        """Whether the wait `a` was taken in is over (on record, or closed another way)."""
        raise NotImplementedError

    def on_record(self, a: A) -> bool:
        raise NotImplementedError

    def _took(self, a: A) -> None:
        """What taking `a` marks beside `taken` (the approval gate: its turn decided)."""

    def _untook(self, a: A) -> None:
        """Undo `_took`: the answer did not count."""

    # --- what every kind shares ---------------------------------------------------------

    def refused(self, a: A) -> Refused | None:
        """The validator's verdict on `a`: None, or why it is refused. Changes nothing."""
        kind = self.check(a)
        return None if kind is None else Refused(kind, f"{self.noun} refused: {kind}")

    def take(self, a: A) -> bool:
        """Take `a` as this wait's answer, if it may be taken. The update's validator
        checked just before, and the SDK (1.35) yields nothing between a validator and its
        handler, so of two answers in one activation the second is refused by its
        validator; this keeps the handler right should anything come to yield in between
        (an interceptor, another SDK version): it refuses, never overwrites."""
        if self.check(a) is not None:
            return False
        self.taken = a
        self._took(a)
        return True

    def take_refused(self, a: A) -> Refused:
        """Why the handler could not take `a` (its validator had let it through)."""
        kind = self.check(a) or self.twice
        return Refused(kind, f"{self.noun} refused: {kind}")

    def reject(self, a: A) -> None:
        """The taken answer did not count (the activity refused it): the wait takes another,
        as if this one had never come."""
        if self.taken is a:
            self.taken = None
            self._untook(a)
        kept = list(self.rejected)
        kept.append(a)
        self.rejected = kept[-REJECTED_KEPT:]

    def was_rejected(self, a: A) -> bool:
        return any(r is a for r in self.rejected)

    def settled(self, a: A) -> bool:
        """Whether an update waiting on `a` may answer: `a` was refused, or its wait is over."""
        return self.was_rejected(a) or self.over(a)

    def outcome(self, a: A) -> Refused | None:
        """Once settled: None if `a` is on record, else why the update fails."""
        if self.was_rejected(a):
            return Refused(self.unattested, self.unattested_message)
        return None if self.on_record(a) else self.ended

    @property
    def unattested_message(self) -> str:
        return f"{self.noun} refused: {self.unattested}"
