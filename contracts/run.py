"""Workflow and activity payloads: one input and one result type per call. This module
holds the run's own (its start, begin and settling); a round's calls, and the two shapes
every payload shares, are contracts/calls.py's, re-exported here for existing callers."""

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agentrt.contracts.approval import DecisionRefusal
from agentrt.contracts.budget import Allowance
from agentrt.contracts.calls import (
    STOPPING_VERDICTS,
    AnswerTerms,
    AtRunLevel,
    FenceRequest,
    FenceResult,
    FenceState,
    ModelRequest,
    ModelResult,
    RefuseRequest,
    ToolAsked,
    ToolCallRequest,
    ToolCallResult,
    ToolReply,
    Transition,
)
from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
from agentrt.contracts.messages import Message, Usage
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import Budget

__all__ = [
    "COMPLETION_ATTEMPTS",
    "DEFAULT_MAX_PROMPT_CHARS",
    "PROMPT_CHARS_CEILING",
    "STOPPING_VERDICTS",
    "AnswerTerms",
    "AtRunLevel",
    "BeginRequest",
    "BeginResult",
    "BegunResult",
    "Carry",
    "CompleteRequest",
    "FenceRequest",
    "FenceResult",
    "FenceState",
    "ModelRequest",
    "ModelResult",
    "RefuseRequest",
    "RunRequest",
    "RunResult",
    "SettleRequest",
    "ToolAsked",
    "ToolCallRequest",
    "ToolCallResult",
    "ToolReply",
    "Transition",
    "TurnRecord",
    "prompt_over_cap",
]

# Input caps (issue 25). A prompt, or an A2A message's text, is refused past the cap on
# every path before anything is created: the worker reads each character with its
# guardrail patterns, and the prompt travels in every history and row of its run.
DEFAULT_MAX_PROMPT_CHARS = 100_000
PROMPT_CHARS_CEILING = 1_000_000  # the largest cap a setting may give (the body limit)


def prompt_over_cap(
    text: str, cap: int, what: str = "prompt", setting: str = "AGENTRT_MAX_PROMPT_CHARS"
) -> str | None:
    """Why `text` is refused, or None when it is within `cap` characters."""
    if len(text) <= cap:
        return None
    return f"{what} is {len(text)} characters, over the cap of {cap} ({setting})"


class Carry(BaseModel):
    """What a long run carries into its next history segment (workflows/segments.py): its
    plan and progress, never its transcript (the activities read that from the store by
    reference) nor its prompt. Metadata only, as the begin's result is."""

    plan: RunPlan
    segment: int  # the number of the segment this one starts (2 for the first carry)
    next_sequence: int  # the run's events stay one sequence across segments
    iterations: int  # rounds done
    usage: Usage
    output_retries: int = 0
    # Decisions, inputs and answers on record, so a late duplicate is refused as before.
    decided: list[str] = Field(default_factory=list)
    recorded: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)
    answered: list[str] = Field(default_factory=list)
    refused: list[DecisionRefusal] = Field(default_factory=list)
    # Whether the segment asks Temporal for its patches and records their markers
    # (workflows/patches.py): a carry written before that module has no such field, and
    # its segment's history holds markers; the segments since take their patches as given.
    patch_markers: bool = True
    children: int = 0  # child runs this run started (contracts/agents.py: the fan-out bound)


class RunRequest(BaseModel):
    """The agent-run workflow's input: which profile to run on which prompt."""

    run_id: str
    profile: str
    prompt: str
    max_iterations: int | None = None
    initiator: str = "anonymous"
    a2a_task_id: str | None = None  # set when the run serves an A2A task
    # Set on a child run (contracts/agents.py): the run that delegated to it, and how deep
    # in its tree it is (a client's run is 0).
    parent_run_id: str | None = None
    depth: int = 0
    # A child run's share of its parent's budget (the parent's reservation for it): its own
    # budget is kept within it (contracts/budget.py `capped`). None: no cap.
    budget: Budget | None = None
    # Set on a run's later segments (continued as new): the run exists, nothing begins.
    carry: Carry | None = None


class RunResult(BaseModel):
    """What the workflow returns. The answer itself is read from the store."""

    run_id: str
    status: RunStatus
    outcome: Outcome
    termination_reason: TerminationReason | None = None
    iterations: int = 0
    truncated: bool = False
    usage: Usage = Field(default_factory=Usage)


# --- activity payloads -----------------------------------------------------------------


class BeginRequest(BaseModel):
    """The begin activity's input: the run to insert and who started it."""

    run_id: str
    profile: str
    prompt: str
    initiator: str
    max_iterations: int | None = None
    workflow_run_id: str = ""
    parent_run_id: str | None = None  # a child run's parent (contracts/agents.py)
    budget_cap: Budget | None = None  # RunRequest.budget: a child's share of its parent's


class BeginResult(BaseModel):
    """What the begin recorded: the run's plan and the next event sequence."""

    plan: RunPlan
    next_sequence: int
    guardrail: str = "ALLOW"  # the input guardrail chain's verdict on the prompt


class BegunResult(BaseModel):
    """What the `begun` update returns: the run row exists."""

    run_id: str
    profile: str
    max_iterations: int


# A completion transaction that keeps failing is tried this often, then the run fails.
COMPLETION_ATTEMPTS = 3


@dataclass(frozen=True)
class TurnRecord:
    """A model turn to record (its message and `llm` event): the answer's is written in the
    completion's own transaction. Not a wire type: it stays inside one activity."""

    sequence: int
    round: int
    message: Message
    payload: dict[str, Any]
    duration_ms: float
    privacy: str
    # The answer level of the run's snapshot, as the model activity read it with the
    # turn's inputs (a snapshot never changes after begin): with it, an answer is completed
    # in one statement on PostgreSQL (activities/settle/completion.py). None: the completion reads
    # the row for it.
    answer_level: str | None = None
    # The reads that ride with this turn (ModelRequest.pending): written in its commit.
    pending: tuple[DeferredStep, ...] = ()


class CompleteRequest(AtRunLevel):
    """The completion transaction's input: the answer, totals and COMPLETED in one write."""

    sequence: int
    answer_sequence: int
    iterations: int
    truncated: bool
    termination_reason: TerminationReason
    usage: Usage
    typed: bool = False  # the answer is a typed one: its object is stored beside it


class SettleRequest(AtRunLevel):
    """Settle the run FAILED or CANCELLED (`status`): the `run.fail` activity's request."""

    sequence: int
    reason: TerminationReason
    iterations: int = 0
    usage: Usage = Field(default_factory=Usage)
    error_type: str | None = None
    status: RunStatus = RunStatus.FAILED
    outcome: Outcome = Outcome.FAILED
    actor: str | None = None  # who cancelled (CANCELLED only)
    note: str | None = None
    error_detail: str | None = None  # a provider's (redacted) reason, shown in the event
    budget: Budget | None  # the plan's: a budget_exhausted event shows the limits
    # A budget_exhausted run stopped before a model call: that call's worst case (None:
    # unknown, the room was already 0) and the room its budget had left.
    worst_case: Usage | None = None
    room: Allowance | None = None
