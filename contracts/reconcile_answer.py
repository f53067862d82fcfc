"""A person's answer on an interrupted write (`on_unknown_outcome: ask`).

A run whose write's outcome stayed unknown (no probe, the probe said unknown or kept
failing) waits AWAITING_RECONCILIATION. An operator looks at the target system and answers
through the `reconcile` update (the operator API, the Python API, the CLI, the page):
- `applied`, with the result text the model should see: the step is recorded, the run goes on;
- `not_applied`, then `retry` (the write runs again under a fresh fence, the same
  idempotency key) or `error` (the model gets an error result, `result` or a default);
- `give_up`: the run ends FAILED interrupted_write.

The answer names the call and the fence it is about (`fence`, from the run view's pending
write): an answer for another call, or for an earlier fence of the same call, is stale.
The workflow is the decider (one answer per wait); the activity that records it checks its
attestation and moves the run in one guarded UPDATE (activities/fence/answer.py)."""

import hashlib
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from agentrt.contracts.pauses import PauseRequest, ProgressPauseRequest
from agentrt.contracts.reconcile import MAX_RESULT_CHARS
from agentrt.contracts.run import ToolCallRequest

Answer = Literal["applied", "not_applied", "give_up"]
Resolved = Literal["applied", "not_applied"]
Then = Literal["retry", "error"]
NOT_APPLIED_NOTE = "The write was not applied (checked by an operator)."


def fence_id(token: str) -> str:
    """The id a run view shows for a fence: a digest of its token (the token itself is the
    claim's credential and stays in the store)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


class ReconcileAnswer(BaseModel):
    """A person's answer on an interrupted write whose outcome is unknown: `applied` (with
    the result the model sees) or `not_applied` (with `then`: retry the write, or fail the
    call with `error`), for the pending call and fence it names. Sent by
    `RuntimeClient.reconcile`; attested for `answered_by`. Under four-eyes, the run's
    initiator may not answer `not_applied`, and a retry needs someone other than the
    write's approver."""

    kind: Literal["reconcile"] = "reconcile"  # one kind of `PauseAnswer` (contracts/answers.py)
    call_id: str = Field(min_length=1, max_length=200)
    fence: str = Field(min_length=1, max_length=64)
    answer: Answer
    # applied: what the model sees (required); not_applied with `error`: the error text.
    result: str | None = Field(default=None, max_length=MAX_RESULT_CHARS)
    then: Then = "retry"  # what `not_applied` does
    answered_by: str = Field(min_length=1, max_length=200)
    reason: str | None = Field(default=None, max_length=2000)
    # Made by the operator API (or a client holding the seal key): store/security/attest.py.
    attestation: str | None = Field(default=None, max_length=4000)

    @model_validator(mode="after")
    def _applied_has_result(self) -> "ReconcileAnswer":
        if self.answer == "applied" and not self.result:
            raise ValueError("an `applied` answer gives the result text the model should see")
        return self

    def claim(self, run_id: str) -> str:
        """What the attestation seals: who answered what, on which fence of which run."""
        then = self.then if self.answer == "not_applied" else ""
        return "\x1f".join((run_id, self.answered_by, self.call_id, self.fence, self.answer, then))


class ReconcileOutcome(BaseModel):
    """The `reconcile` update's answer: the answer is on record."""

    run_id: str
    call_id: str
    answer: Answer
    then: Then | None = None


class AwaitReconcileRequest(ProgressPauseRequest):
    """Progress is carried from this build on (a request of an earlier build has none, and
    the transition then leaves the row's progress as it is)."""

    round: int
    call_id: str
    tool: str


class ReconciledRequest(PauseRequest):
    """Record `answer` on `write` (the interrupted request, with its fence token)."""

    write: ToolCallRequest
    answer: ReconcileAnswer


class WriteResolution(BaseModel):
    """An operator's word on a write whose run has ENDED with its outcome unknown (FAILED
    interrupted_write, its fence kept as evidence): what the target system showed. Nothing
    runs again (the run is terminal); the fence is emptied in one guarded UPDATE with a
    WRITE_RESOLVED event naming the principal, and the run leaves "Needs attention"
    (store/runs/resolution.py). Attested like an answer (store/security/attest.py)."""

    kind: Literal["resolution"] = "resolution"  # one kind of `RunAnswer` (contracts/answers.py)
    call_id: str = Field(min_length=1, max_length=200)
    fence: str = Field(min_length=1, max_length=64)
    outcome: Resolved
    # Audited: what the operator checked and where (a ticket, the target's record).
    note: str = Field(min_length=1, max_length=2000)
    resolved_by: str = Field(min_length=1, max_length=200)
    attestation: str | None = Field(default=None, max_length=4000)

    def claim(self, run_id: str) -> str:
        """What the attestation seals: who said which outcome, on which fence of which run,
        with which note (by its digest)."""
        note = hashlib.sha256(self.note.encode("utf-8", "surrogatepass")).hexdigest()
        return "\x1f".join((run_id, self.resolved_by, self.call_id, self.fence, self.outcome, note))
