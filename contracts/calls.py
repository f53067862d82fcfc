"""A round's calls: the model call, the tool call and the write fence's, each one request
and one result type; and the two shapes every activity payload shares (`AtRunLevel`,
`Transition`). The run's own payloads (start, begin, settle) are contracts/run.py's."""

from typing import Any

from pydantic import BaseModel, Field

from agentrt.contracts.budget import Allowance
from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import RunStatus, ToolEffect
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.profiles import Budget, PrivacyLevel


class AtRunLevel(BaseModel):
    """A request whose activity records at the run's privacy level: the plan's, as the
    workflow holds it. Required: the workflow always sends it, so an activity never reads
    the run's snapshot for it."""

    run_id: str
    privacy: PrivacyLevel


class AtCall(AtRunLevel):
    """A request about one call of a model turn: its round, the sequence of its step, and
    the call itself (a tool call to run, one refused, a child agent's end to record)."""

    round: int
    sequence: int
    call: ToolCall


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
    settled: Transition | None = None
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


class ToolCallRequest(AtCall):
    """One tool call to run, recorded at the run's privacy level."""

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


class RefuseRequest(AtCall):
    """A call refused before it ran (a denial, a guardrail): its error result to record."""

    reason: str


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
