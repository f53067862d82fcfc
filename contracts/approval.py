"""Human-in-the-loop payloads: the pending turn, the decision, the cancel."""

from datetime import datetime

from pydantic import BaseModel, Field

from agentrt.contracts.messages import Message, ToolCall

# A denied turn's calls are refused with this text as their (error) tool result, so a model
# (and the scripted provider's `result: {denied: true}`) can tell a denial from a failure.
DENIAL_PREFIX = "Denied by "


def denial_note(decided_by: str, reason: str | None) -> str:
    return f"{DENIAL_PREFIX}{decided_by}" + (f": {reason}" if reason else ".")


def is_denial(message: Message) -> bool:
    return message.role == "tool" and message.is_error and message.content.startswith(DENIAL_PREFIX)


class PendingApproval(BaseModel):
    """A suspended turn: none of its calls ran. The digest names exactly this turn."""

    turn_digest: str
    round: int
    calls: list[ToolCall] = Field(default_factory=list)
    requested_at: datetime


class ApprovalDecision(BaseModel):
    """Payload of the `approve` signal and of the `decide` update."""

    approved: bool
    decided_by: str = Field(min_length=1, max_length=200)
    turn_digest: str = Field(min_length=1, max_length=128)
    reason: str | None = Field(default=None, max_length=2000)
    # Sealed by the operator API for its authenticated principal (store/attest.py); absent
    # on the stock signal/update path, whose decider is then recorded as unauthenticated.
    attestation: str | None = Field(default=None, max_length=2000)


class DecisionReceipt(BaseModel):
    """What the `decide` update returns once the decision is accepted."""

    run_id: str
    approved: bool
    turn_digest: str


class CancelRequest(BaseModel):
    """Payload of the `cancel` signal."""

    by: str = Field(min_length=1, max_length=200)
    reason: str | None = Field(default=None, max_length=2000)
