"""What a reconcile probe answers about an interrupted write (activities/fence/reconcile.py).

A probe asks the target system what became of one call, by its idempotency key and its
arguments, and answers one of three things. The run acts on the answer: applied, the step
is recorded with `result` and the run goes on; not applied, the write is scheduled again
under a fresh fence with the same key; unknown, the run ends as it would with no probe."""

from typing import Literal

from pydantic import BaseModel, Field

Verdict = Literal["applied", "not_applied", "unknown"]
APPLIED: Verdict = "applied"
NOT_APPLIED: Verdict = "not_applied"
UNKNOWN: Verdict = "unknown"

MAX_RESULT_CHARS = 50_000  # as a tool's own result (activities/tools.py)


class Reconciled(BaseModel):
    """A probe's answer. Build it with `Reconciled.applied(text)`, `.not_applied()` or
    `.unknown()`; `result` is what the model sees for an applied write."""

    verdict: Verdict
    result: str | None = Field(default=None, max_length=MAX_RESULT_CHARS)

    @classmethod
    def applied(cls, result: str) -> "Reconciled":
        """The write happened; `result` is what the model is told it returned."""
        return cls(verdict=APPLIED, result=result[:MAX_RESULT_CHARS])

    @classmethod
    def not_applied(cls) -> "Reconciled":
        """The write did not happen: the run may send it again, under the same key."""
        return cls(verdict=NOT_APPLIED)

    @classmethod
    def unknown(cls) -> "Reconciled":
        """The target system cannot say: the run ends as it would without a probe."""
        return cls(verdict=UNKNOWN)


class WithdrawRequest(BaseModel):
    """A write whose target waits for the operator's answer (a remote agent's task in
    `input-required`), and the run that asked was cancelled: the target is told to stop
    waiting (activities/fence/reconcile.py `withdraw`). No content: the call's name and
    ids, and the remote task."""

    run_id: str
    tool: str
    call_id: str
    idempotency_key: str
    task_id: str


class ReconcileResult(BaseModel):
    """What the reconcile activity tells the workflow: the verdict only (an applied
    write's result is already recorded as its step)."""

    verdict: Verdict
