"""The run snapshot: the profile as resolved when the run began, stored on its row as JSON.

Parsed in one place, into one model, with one set of defaults. The workflow holds the full
`RunPlan` (from `run.begin`'s result); what the activities and stores read back from the
row is this, and it is lenient on purpose: a snapshot recorded by an earlier version lacks
the fields added since, and each default below is what that version meant.
"""

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrt.contracts.messages import ToolSpec
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import Budget, GuardrailConfig, PrivacyLevel

# A row whose snapshot holds no plan (or an unreadable one) is shown at this level: fail closed.
UNKNOWN_PLAN_LEVEL: PrivacyLevel = "metadata"


class RecordedTool(BaseModel):
    """A tool of the recorded plan: its effect class and whether approval binds it. The
    effect stays a string: a value this version does not know must still parse (the views
    show it as recorded)."""

    model_config = ConfigDict(frozen=True)

    name: str
    effect: str = "NON_IDEMPOTENT_WRITE"  # fail closed, as ToolEffect.resolve does
    requires_approval: bool = False


class RecordedPlan(BaseModel):
    """The fields of the recorded `RunPlan` that are read back from the row."""

    model_config = ConfigDict(frozen=True)

    model: str = ""
    fallback_model: str | None = None
    privacy: PrivacyLevel = UNKNOWN_PLAN_LEVEL
    # `RunPlan`'s default, and what every plan recorded before answer levels existed meant.
    answer_level: PrivacyLevel = "full"
    budget: Budget | None = None  # absent in plans recorded before budgets existed
    tools: list[RecordedTool] = Field(default_factory=list)

    def effect_of(self, tool: str) -> str | None:
        """The effect class the run recorded for `tool` (None: not offered to the run)."""
        return next((t.effect for t in self.tools if t.name == tool), None)


class RunSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    instructions: str = ""
    tools: list[ToolSpec] = Field(default_factory=list)
    guardrails: GuardrailConfig = Field(default_factory=GuardrailConfig)
    plan: RecordedPlan | None = None

    @property
    def privacy(self) -> PrivacyLevel:
        """The level the run's events and steps are recorded at."""
        return UNKNOWN_PLAN_LEVEL if self.plan is None else self.plan.privacy

    @property
    def answer_level(self) -> PrivacyLevel:
        """The profile's answer ceiling, before any provider tightened it."""
        return UNKNOWN_PLAN_LEVEL if self.plan is None else self.plan.answer_level

    @classmethod
    def parse(cls, raw: str | None) -> "RunSnapshot":
        """A stored snapshot column. A missing or unreadable one reads as a snapshot with no
        plan, so every level derived from it fails closed."""
        if not raw:
            return cls()
        try:
            return cls.model_validate_json(raw)
        except ValidationError:
            return cls()


class SnapshotRecord(BaseModel):
    """The snapshot as `run.begin` writes it: the profile as resolved, with its full plan.
    `RunSnapshot` reads it back (leniently: a row may hold an earlier version's). No plan
    (a bare record) reads as `UNKNOWN_PLAN_LEVEL`, as a row with none always did."""

    model_config = ConfigDict(frozen=True)

    instructions: str = ""
    tools: list[ToolSpec] = Field(default_factory=list)
    guardrails: GuardrailConfig = Field(default_factory=GuardrailConfig)
    plan: RunPlan | None = None
