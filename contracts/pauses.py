"""The pauses' guarded transitions (suspend for approval and resume, wait for input and
add it): one request type a call, each answered with a `Transition` (contracts/calls.py)."""

from pydantic import Field

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.calls import AtRunLevel
from agentrt.contracts.messages import Usage


class PauseRequest(AtRunLevel):
    """A pause's guarded transition, recorded at the run's privacy level."""

    sequence: int  # the step's event


class ProgressPauseRequest(PauseRequest):
    """A pause that shows the run's progress so far while it waits (the settle writes the
    final sums)."""

    iterations: int = 0
    usage: Usage = Field(default_factory=Usage)


class SuspendRequest(ProgressPauseRequest):
    pending: PendingApproval


class ResumeRequest(PauseRequest):
    round: int
    decision: ApprovalDecision
    # Record the decision only if its attestation opens (else a DECISION_REFUSED event).
    attested_only: bool = True


class AwaitInputRequest(ProgressPauseRequest):
    round: int
    # A write's question (a remote agent's input-required): shown in the event; else the
    # model asked the remote user.
    question: str | None = None
    call_id: str | None = None
    tool: str | None = None


class AddInputRequest(PauseRequest):
    round: int
    message: InputMessage
    # The answer to the write `call_id`'s question: it goes to the write, not the transcript.
    call_id: str | None = None
