"""Workflow and activity payloads: one input and one result type per call."""

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agentrt.contracts.approval import DecisionRefusal
from agentrt.contracts.budget import Allowance
from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import (
    Outcome,
    RunStatus,
    TerminationReason,
    ToolEffect,
)
from agentrt.contracts.messages import Message, ToolCall, Usage
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import Budget, PrivacyLevel

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


class AtRunLevel(BaseModel):
    """A request whose activity records at the run's privacy level: the plan's, as the
    workflow holds it."""

    run_id: str
    privacy: PrivacyLevel


# A completion transaction that keeps failing is tried this often, then the run fails.
COMPLETION_ATTEMPTS = 3
# Output-guardrail verdicts that stop a run (contracts.turn.turn_end).
STOPPING_VERDICTS = frozenset({"DENY", "REQUIRE_APPROVAL"})


class AnswerTerms(BaseModel):
    """The terms a model turn is judged on (contracts.turn.turn_end), made by the workflow:
    the spend before the call and the plan's budget, and whether an answer asking for
    input pauses the run. When the turn is the answer, the activity completes the run on
    them: the completion the workflow would otherwise make next. Iterations, truncation
    and reason follow from the call (a tool-less call past the cap ends MAX_ITERATIONS)."""

    sequence: int  # the completion event's
    usage: Usage  # the run's before this call
    pause_for_input: bool
    budget: Budget | None
    # The plan's: an answer that is not JSON valid against it is no answer (TurnEnd.INVALID).
    output_schema: dict[str, Any] | None = None
    # The room the run's ledger reserved for this call (contracts/budget.py): the activity
    # calls the provider only if the call's worst case fits. None: no check (a run
    # without a budget, or one that began before reservations).
    allowance: Allowance | None = None


class ModelRequest(AtRunLevel):
    """A reference, not a conversation: the activity reads the transcript (and the
    profile's instructions, tool specs and guardrails) from the store. The plan's model,
    fallback and privacy level travel here; with `answer` the activity completes the run
    when its turn is the answer."""

    round: int
    sequence: int
    offer_tools: bool
    model: str
    fallback_model: str | None
    answer: AnswerTerms
    # The reply's bound, sent to the provider (RunPlan.max_output_tokens); None: its own.
    max_tokens: int | None = None
    # The reads of the round before, not yet recorded (contracts/deferred.py): the call
    # reads them as part of its transcript and writes them with its turn, in one commit.
    pending: list[DeferredStep] = Field(default_factory=list)


class ModelResult(BaseModel):
    """A model call's outcome as the workflow sees it: the calls to make, usage, verdict."""

    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str = "stop"
    guardrail: str = "ALLOW"  # the output guardrail chain's verdict on the reply
    input_required: bool = False  # the model asked the user for more information
    # The completion this activity made on the answer (ModelRequest.answer), if it made one.
    settled: "Transition | None" = None
    # The answer failed the output schema: the activity recorded why, for the model, at the
    # completion's sequence (AnswerTerms.sequence). Why stays in the store, not in history.
    output_invalid: bool = False
    # The call's worst case (contracts/budget.py), when its request had an allowance; with
    # `over_budget` it did not fit, and no provider was called (usage 0).
    reserved: Usage | None = None
    over_budget: bool = False
    # How many of the request's `pending` reads this call stored (all of them, on this
    # build; 0 from a build that knew none, so the workflow records them itself).
    pending_written: int = 0


class ToolAsked(BaseModel):
    """A fenced write that waits for the operator (a remote agent's `input-required`): its
    question, shown to the operator while the run waits for input, and the remote task the
    answer goes to. `turn`: the call's turn that asked (0: its first message)."""

    question: str
    task_id: str = ""
    turn: int = 0


class ToolReply(BaseModel):
    """The operator's answer to a write's question, sent by the next attempt of the same
    call (its same idempotency key) as the call's turn `turn` on the remote's task."""

    turn: int
    task_id: str = ""
    text: str


class ToolCallRequest(AtRunLevel):
    """One tool call to run, recorded at the run's privacy level."""

    # Required here: the workflow always sends its plan's level, and the tool and write
    # activities record at it (they never read the run's snapshot for it).
    privacy: PrivacyLevel
    round: int
    sequence: int
    call: ToolCall
    effect: ToolEffect
    idempotency_key: str
    fence_token: str | None = None
    # A write's tool's own attempt bound (ToolPlan.attempt_seconds), as the workflow's plan
    # holds it: the write activity cuts the tool's call there.
    attempt_seconds: float | None = None
    # The operator's answer this attempt carries to the remote (a continued write).
    reply: ToolReply | None = None
    # A READ_ONLY call whose step rides with the run's next write: the activity returns its
    # rows (ToolCallResult.deferred) instead of writing them. False: recorded at once.
    defer: bool = False


class ToolCallResult(BaseModel):
    """A tool call's outcome: whether it failed, and whether a retry found it done.
    `asked`: the write is not over, it waits for the operator's answer (nothing recorded)."""

    call_id: str
    is_error: bool = False
    replayed: bool = False
    asked: ToolAsked | None = None
    # The call's step, not recorded: its sealed rows, for the run's next write (defer).
    deferred: DeferredStep | None = None


class RefuseRequest(AtRunLevel):
    """A call refused before it ran (a denial, a guardrail): its error result to record."""

    round: int
    sequence: int
    call: ToolCall
    reason: str


class Transition(BaseModel):
    """The one result of a guarded status change, in the store and on the wire: whether this
    call applied it, and the run's status now (None: no such run). It never raises for a
    refusal.
    - `refusal`: not applied because a decision was refused (an ErrorType value); the run
      still waits.
    - `error`: the type of a completion that failed where the failure is reported, not
      raised (the model activity's completion on the answer); the run must then fail."""

    applied: bool
    status: RunStatus | None = None
    refusal: str | None = None
    error: str | None = None


class FenceRequest(BaseModel):
    """A non-idempotent write's fence to claim, stamp or clear, by its token."""

    run_id: str
    call_id: str
    tool: str
    token: str


class FenceResult(BaseModel):
    """Result of stamping or resolving a write fence."""

    state: str  # one of FenceState values
    outcome: ToolCallResult | None = None


class FenceState:
    """What claiming a fence found: stamped now, already done, run not running, or busy."""

    STAMPED = "stamped"
    ALREADY_DONE = "already_done"
    RUN_NOT_RUNNING = "run_not_running"
    BUSY = "busy"
    NEVER_CLAIMED = "never_claimed"
    INTERRUPTED = "interrupted"


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


ModelResult.model_rebuild()
