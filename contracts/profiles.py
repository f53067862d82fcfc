"""Agent profiles: what a run may do, written in Python or the worker's YAML file."""

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.held import holds_objects, split_held
from agentrt.contracts.messages import Usage
from agentrt.contracts.output import check_schema
from agentrt.contracts.strict import Strict, unknown_keys

PrivacyLevel = Literal["full", "redacted", "metadata", "none"]
# A write with no answer on its outcome: "fail" the run, or "ask" a person (the run waits
# AWAITING_RECONCILIATION for an operator's answer, up to reconcile_timeout_seconds).
UnknownOutcome = Literal["fail", "ask"]
# What a profile's tools may do to the world, the strongest of their effects.
Reach = Literal["read_only", "idempotent", "writes"]
DEFAULT_RECONCILE_TIMEOUT_SECONDS = 86_400.0

# Strictness of privacy levels; an answer ceiling only ever moves to the right.
LEVEL_RANK = {"full": 0, "redacted": 1, "metadata": 2, "none": 3}


def stricter(a: str, b: str | None) -> str:
    """The stricter of two levels; an unknown level counts as `none` (fail closed)."""
    if b is None:
        return a
    return a if LEVEL_RANK.get(a, 3) >= LEVEL_RANK.get(b, 3) else b


DEFAULT_MAX_ITERATIONS = 5
# The design's bound on a run's rounds (docs: a run is bounded). An installation may raise
# it explicitly (AGENTRT_MAX_ITERATIONS_CEILING, up to ITERATIONS_CEILING_LIMIT); past 20
# rounds a run continues as new every `segment_rounds`, so each history stays bounded.
MAX_ITERATIONS_CEILING = 20
ITERATIONS_CEILING_LIMIT = 10_000
CEILING_SETTING = "AGENTRT_MAX_ITERATIONS_CEILING"
DEFAULT_SEGMENT_ROUNDS = 50
# How many calls of one turn run at once (reads and idempotent writes; a turn's
# non-idempotent writes run one after another beside them): 1 runs them one by one.
DEFAULT_MAX_PARALLEL_TOOLS = 4
MAX_PARALLEL_TOOLS_CEILING = 32
DEFAULT_OUTPUT_RETRIES = 2
MAX_OUTPUT_RETRIES = 10
# The largest reply bound a profile may set (max_output_tokens).
MAX_OUTPUT_TOKENS_CEILING = 1_000_000


class Timeouts(BaseModel):
    """Activity time bounds, in seconds. Part of the run plan so a run replays the same."""

    model_seconds: float = 120.0
    tool_seconds: float = 60.0
    write_seconds: float = 60.0
    write_heartbeat_seconds: float = 10.0
    schedule_to_start_seconds: float = 60.0
    # A model or tool call on a worker that died is retried after this long.
    heartbeat_seconds: float = 5.0
    # How long a run keeps retrying work that fails only because the database is away.
    store_outage_seconds: float = 600.0


class GuardrailConfig(BaseModel):
    """Input guardrails see the prompt; output guardrails see each model reply.

    Built in: `secrets` (REDACT API keys, bearer tokens, JWTs, credential URLs, e-mail
    addresses), and pattern lists that DENY or REQUIRE_APPROVAL when a regex matches.
    """

    input: list[str] = Field(default_factory=lambda: ["secrets"])
    output: list[str] = Field(default_factory=lambda: ["secrets"])
    deny_patterns: list[str] = Field(default_factory=list)
    approval_patterns: list[str] = Field(default_factory=list)


class Budget(Strict):
    """A run's spending limits: each model call's worst case is reserved before it is made
    (contracts/budget.py, workflows/budget.py) and the spend checked after it (see
    contracts/turn.py). A limit must be positive; 0 is a configuration error."""

    max_tokens: int | None = Field(default=None, gt=0, description="prompt + completion")
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_limit(self) -> "Budget":
        if self.max_tokens is None and self.max_cost_usd is None:
            raise ValueError("a budget sets max_tokens, max_cost_usd or both")
        return self


def spent_limit(usage: Usage, budget: Budget | None) -> str | None:
    """The name of the limit `usage` has reached, or None while within budget (the rules:
    contracts/turn.py). Shared by the workflow and the model activity that completes a
    run on its answer, so both apply the same check."""
    if budget is None:
        return None
    if budget.max_tokens is not None and usage.total_tokens >= budget.max_tokens:
        return "max_tokens"
    if budget.max_cost_usd is not None and (
        usage.cost_usd is None or usage.cost_usd >= budget.max_cost_usd
    ):
        return "max_cost_usd"
    return None


class Profile(BaseModel):
    """An agent profile: what a run of it may do.

    Written in Python, handed to `AgentrtPlugin(settings, profiles=[...])`:

        Profile(name="support", model="openai:gpt-4o",
                tools=[refund, billing_toolbox, McpServer(name="crm", url=...)])

    or in the worker's YAML file, which loads onto this type (core/profiles.py) and names
    its tools and toolboxes. `tools` takes names and, in Python, the objects themselves (a
    `@tool` function, a plain function, a `Toolbox`, an `McpServer`: contracts/held.py):
    the profile keeps their names, and the worker serving it loads the objects. A key this
    type does not know is an error naming the key and the profile: a misspelt `aproval:`
    must not leave approval at its default."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    instructions: str = "You are a helpful assistant."
    model: str = Field(description="provider:model, e.g. scripted:demo")
    fallback_model: str | None = None  # used when the model's provider fails
    tools: list[str] = Field(default_factory=list)
    # The objects `tools` was given (not part of the profile's data: never serialized).
    _held: tuple[object, ...] = PrivateAttr(default=())
    # Every tool of each, after `tools`. An MCP server (AGENTRT_MCP_SERVERS_FILE) is a
    # toolbox of its name.
    toolboxes: list[str] = Field(default_factory=list)
    # Profiles this one may delegate to: each is offered to its model as a tool, and a call
    # runs it as a child run (contracts/agents.py). Checked when the profiles load.
    agents: list[str] = Field(default_factory=list)
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    privacy: PrivacyLevel = "full"
    approval: Literal["writes", "none", "all"] = "writes"
    approval_timeout_seconds: float | None = None  # None: wait for a decision indefinitely
    four_eyes: bool = False  # the run's initiator may not approve it
    # An approval policy (`name@version`, from the worker's AGENTRT_POLICIES_FILE) decides
    # each approval-bound turn first: allow, deny, or how many people must approve
    # (docs/guides/approval-policies.md). None: a person decides every turn.
    approval_policy: str | None = Field(default=None, max_length=200)
    # A decision counts only with an attestation of its decider (made by the operator API
    # or a client holding the seal key); "allow" also counts the stock CLI's and Temporal
    # Web's, whose decided_by anyone with Temporal access can type.
    unattested_decisions: Literal["refuse", "allow"] = "refuse"
    timeouts: Timeouts = Field(default_factory=Timeouts)
    guardrails: GuardrailConfig = Field(default_factory=GuardrailConfig)
    publish: bool = False  # offered to remote agents as an A2A skill
    description: str = ""  # the skill's description in the Agent Card
    answer_level: PrivacyLevel = "full"  # the answer ceiling: what of a result may be kept
    budget: Budget | None = None
    # The bound on each model reply, in tokens, sent with every request; None: the
    # provider's own, or with a budget contracts/budget.py's DEFAULT_MAX_OUTPUT_TOKENS (a
    # budget reserves each call's worst case, which needs a bound).
    max_output_tokens: int | None = Field(default=None, gt=0, le=MAX_OUTPUT_TOKENS_CEILING)
    # The queue its runs' workflows are started on (the worker registers it; clients route
    # by the registration); None: the client's AGENTRT_TASK_QUEUE.
    task_queue: str | None = Field(default=None, min_length=1)
    # What a write whose outcome stays unknown (no probe, or no answer from it) does to the
    # run. "fail": FAILED interrupted_write, the fence kept as evidence. "ask": the run
    # waits AWAITING_RECONCILIATION, holding no worker, for a person's answer (scope
    # runs:reconcile); none within `reconcile_timeout_seconds` fails it.
    on_unknown_outcome: UnknownOutcome = "fail"
    # How many calls of a turn run at once (workflows/_group.py); 1: one after another.
    max_parallel_tools: int = Field(
        default=DEFAULT_MAX_PARALLEL_TOOLS, ge=1, le=MAX_PARALLEL_TOOLS_CEILING
    )
    reconcile_timeout_seconds: float = Field(default=DEFAULT_RECONCILE_TIMEOUT_SECONDS, gt=0)
    # A typed answer (contracts/output.py): a JSON Schema, or in Python a pydantic model
    # (its schema is kept). The answer must be JSON valid against it; an invalid one goes
    # back to the model with the error up to `output_retries` times, then the run fails.
    output_schema: dict[str, Any] | None = None
    output_retries: int = Field(default=DEFAULT_OUTPUT_RETRIES, ge=0, le=MAX_OUTPUT_RETRIES)

    @model_validator(mode="wrap")
    @classmethod
    def _objects(cls, data: Any, handler: ModelWrapValidatorHandler["Profile"]) -> "Profile":
        """Tool objects in `tools` become names; the objects are kept beside (`held`)."""
        if not holds_objects(data):
            return handler(data)
        names, held = split_held(data)
        profile = handler(names)
        profile._held = held
        return profile

    def held(self) -> tuple[object, ...]:
        """The tool objects this profile was given in `tools` (none from YAML)."""
        return self._held

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """Unknown keys, the profile's own and its timeouts' and guardrails', named with the
        profile. Timeouts and GuardrailConfig stay lenient themselves: recorded run plans
        and snapshots decode them."""
        if not isinstance(data, Mapping):
            return data
        who = f"profile {data.get('name')!r}" if data.get("name") else "a profile"
        for keys, known, where in (
            (data.keys(), cls.model_fields, ""),
            (_keys(data.get("timeouts")), Timeouts.model_fields, "timeouts."),
            (_keys(data.get("guardrails")), GuardrailConfig.model_fields, "guardrails."),
        ):
            problem = unknown_keys(keys, known, where)
            if problem is not None:
                raise ValueError(f"{who}: {problem}")
        return data

    @field_validator("output_schema", mode="before")
    @classmethod
    def _schema(cls, value: Any) -> Any:
        if isinstance(value, type) and issubclass(value, BaseModel):
            value = value.model_json_schema()
        if isinstance(value, dict):
            check_schema(value)
        return value

    @field_validator("model", "fallback_model")
    @classmethod
    def _model_ref(cls, value: str | None) -> str | None:
        if value is None:
            return None
        provider, sep, model = value.partition(":")
        if not sep or not provider or not model:
            raise ValueError(f"model must be 'provider:model', got {value!r}")
        return value

    @field_validator("max_iterations")
    @classmethod
    def _cap(cls, value: int) -> int:
        # Checked against the installation's ceiling where it is known: the worker refuses
        # a profile over it at start (workers/compose.py), never clamps it silently.
        if not 1 <= value <= ITERATIONS_CEILING_LIMIT:
            raise ValueError(
                f"max_iterations must be between 1 and {ITERATIONS_CEILING_LIMIT}, got {value}"
            )
        return value

    def approval_binds(self, effect: ToolEffect) -> bool:
        """Whether a call of a tool with `effect` waits for approval in this profile's runs."""
        return self.approval == "all" or (
            self.approval == "writes" and effect != ToolEffect.READ_ONLY
        )

    @property
    def writes_unapproved(self) -> bool:
        """Whether a run may call a tool with no approval asked for. Counted from the
        profile alone (approval `none` with any tool), failing closed: the API, which
        decides grants by it, sees no tool effects (a read-only profile declares
        `approval: writes`, which asks for nothing when no tool writes)."""
        return self.approval == "none" and bool(self.tools or self.toolboxes or self.agents)


def _keys(value: object) -> Iterable[object]:
    return value.keys() if isinstance(value, Mapping) else ()


def over_ceiling(value: int, ceiling: int, what: str = "max_iterations") -> str | None:
    """Why `value` rounds are refused under the installation's `ceiling`, or None."""
    if 1 <= value <= ceiling:
        return None
    return (
        f"{what} must be between 1 and {ceiling}, got {value} (the installation's ceiling, "
        f"{CEILING_SETTING}, raises it explicitly)"
    )


def clamp_iterations(
    explicit: int | None, profile_default: int, ceiling: int = MAX_ITERATIONS_CEILING
) -> int:
    """The run's cap: an explicit one, else the profile's own; within the ceiling (the
    worker refuses an explicit cap over it before this, and a profile over it at start)."""
    if explicit is None:
        return min(profile_default, ceiling)
    return max(1, min(explicit, ceiling))
