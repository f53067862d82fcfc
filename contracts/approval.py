"""Human-in-the-loop payloads: the pending turn, the decision, the cancel."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from agentrt.contracts.messages import Message, ToolCall

# A denied turn's calls are refused with this text as their (error) tool result, so a model
# (and the scripted provider's `result: {denied: true}`) can tell a denial from a failure.
DENIAL_PREFIX = "Denied by "


def denial_note(decided_by: str, reason: str | None) -> str:
    """The error tool result a denied turn's calls get: who denied, and why when said."""
    return f"{DENIAL_PREFIX}{decided_by}" + (f": {reason}" if reason else ".")


def is_denial(message: Message) -> bool:
    """Whether a transcript message is a denial's tool result (`denial_note`)."""
    return message.role == "tool" and message.is_error and message.content.startswith(DENIAL_PREFIX)


class PendingApproval(BaseModel):
    """A suspended turn: none of its calls ran. The digest names exactly this turn."""

    turn_digest: str
    round: int
    calls: list[ToolCall] = Field(default_factory=list)
    requested_at: datetime


class ApprovalDecision(BaseModel):
    """Payload of the `approve` signal and of the `decide` update; one kind of `PauseAnswer`
    (contracts/answers.py) on the `answer` update."""

    kind: Literal["decision"] = "decision"
    approved: bool
    decided_by: str = Field(min_length=1, max_length=200)
    turn_digest: str = Field(min_length=1, max_length=128)
    reason: str | None = Field(default=None, max_length=2000)
    # Sealed by the operator API (or a client holding the seal key) for its decider
    # (store/security/attest.py); absent on the stock signal/update path, which a profile counts
    # only with `unattested_decisions: allow` (its decider then labelled unauthenticated).
    attestation: str | None = Field(default=None, max_length=2000)


class DecideResult(BaseModel):
    """What the `decide` update returns once the decision is accepted."""

    run_id: str
    approved: bool
    turn_digest: str


class CancelRequest(BaseModel):
    """Payload of the `cancel` signal."""

    by: str = Field(min_length=1, max_length=200)
    reason: str | None = Field(default=None, max_length=2000)


class DecisionRefusal(BaseModel):
    """A decision the workflow refused, kept for the sender of a fire-and-forget signal
    (query `refused_decisions`); the run is unchanged by it."""

    refusal: str  # the ErrorType value
    message: str  # the same, as a sentence
    decided_by: str
    approved: bool
    turn_digest: str
    at: datetime


def reason_missing(approved: bool, reason: str | None) -> bool:
    """A denial must say why (the model is told it, the audit keeps it): True for a denial
    whose reason is absent or blank."""
    return not approved and not (reason or "").strip()


REASON_REQUIRED = "a denial needs a reason: it is kept in the run's audit and the model is told it"


def refusal_sentence(
    refusal: str | None,
    *,
    run_id: str,
    turn_digest: str,
    decided_by: str,
    pending_digest: str | None = None,
) -> str:
    """A refused decision as a sentence an operator can act on (refusal: an ErrorType value)."""
    turn = f"turn {turn_digest[:12]}"
    match refusal:
        case "StaleTurn":
            now = f" it now waits on turn {pending_digest[:12]}" if pending_digest else ""
            return (
                f"run {run_id} is not waiting on {turn}:{now or ' another turn is pending'}; "
                "check `agentrt status` and decide the current turn"
            )
        case "AlreadyDecided":
            return f"{turn} of run {run_id} was already decided; nothing changed"
        case "SelfApproval":
            return (
                f"{decided_by} started run {run_id} and may not approve it: its profile "
                "requires a second person (four-eyes); ask another approver"
            )
        case "UnattestedDecision":
            return (
                f"the decision by {decided_by} on {turn} of run {run_id} carries no valid "
                "attestation, and its profile counts only attested decisions: decide through "
                "the operator API or `agentrt approve` (the run still waits)"
            )
        case "ReasonRequired":
            return f"the denial by {decided_by} of {turn} of run {run_id} gives no reason; " + (
                "deny again with one (the run still waits)"
            )
        case "RunNotAwaitingApproval":
            return (
                f"run {run_id} is not waiting for approval (it resumed or ended); nothing changed"
            )
        case _:
            return f"the decision on {turn} of run {run_id} was refused ({refusal or 'unknown'})"
