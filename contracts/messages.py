"""Provider-neutral conversation types. These live in the database, not in Temporal history."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from agentrt.contracts.output import MAX_DEPTH, depth

Role = Literal["system", "user", "assistant", "tool"]
# The arguments of a call the model wrote that are no usable JSON object: the tool layer
# answers the model "invalid arguments", and the model can correct itself next round.
INVALID_ARGUMENTS_KEY = "__invalid_json__"


def bounded_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments, or the invalid-arguments marker when they nest deeper than
    MAX_DEPTH. Past that, the model activity's result could not be encoded for Temporal
    (pydantic stops at 255 levels) or decoded by the workflow, which would fail its task
    for ever; and nothing a tool takes is that deep."""
    if depth(arguments) <= MAX_DEPTH:
        return arguments
    return {INVALID_ARGUMENTS_KEY: f"the arguments nest deeper than {MAX_DEPTH} levels"}


class ToolCall(BaseModel):
    """A tool call the model asked for: its id, the tool's name and the arguments."""

    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One message of a conversation with the model: the system prompt, a user's words, the
    model's turn (with its tool calls), or a tool call's result (`tool_call_id`)."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False


class ToolSpec(BaseModel):
    """What a model is offered: a name, a description and a JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    # The tool's reconcile probe, named for people (a function, or an MCP server's read
    # tool); None: no probe. Never offered to a model nor stored: excluded from dumps.
    reconcile: str | None = Field(default=None, exclude=True)


class Usage(BaseModel):
    """Tokens and cost of one model call, or of a run's calls summed.

    `cost_usd` None means unknown (no price for the model, or a call recorded before costs
    were): a sum with an unknown part is unknown, never a silent 0. A run's total starts
    from `Usage.none()`, which is zero and known.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def none(cls) -> "Usage":
        """Zero tokens at a known cost of 0: the start of a run's total."""
        return cls(cost_usd=0.0)

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "Usage") -> "Usage":
        cost = None
        if self.cost_usd is not None and other.cost_usd is not None:
            cost = self.cost_usd + other.cost_usd
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=cost,
        )


class ProviderRequest(BaseModel):
    """One call to a model provider (worker-side only)."""

    model: str
    messages: list[Message]
    tools: list[ToolSpec] | None = None
    round: int = 1
    # A typed answer's JSON Schema: a provider with structured output asks for it natively.
    output_schema: dict[str, Any] | None = None
    # The reply's bound in tokens, sent to the provider: a budget's worst case counts on it
    # (contracts/budget.py). None: the provider's own (its configured or default bound).
    max_tokens: int | None = None


class ProviderReply(BaseModel):
    """A model provider's answer to one `ProviderRequest`: text, tool calls, or both."""

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    input_required: bool = False  # the model ends its turn asking the user for more
    finish_reason: str = "stop"
    usage: Usage = Field(default_factory=Usage)
