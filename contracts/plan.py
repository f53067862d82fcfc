"""The run plan: a profile as resolved when its run began (its tools with their effects and
queues, its limits), recorded in the run's history so replay is stable, and carried in
every request that needs it (the workflow is the one decider)."""

from typing import Any, Literal

from pydantic import BaseModel

from agentrt.contracts.budget import Allowance
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.profiles import (
    DEFAULT_RECONCILE_TIMEOUT_SECONDS,
    Budget,
    PrivacyLevel,
    Timeouts,
    UnknownOutcome,
)

# Bounds on a tree of runs (AGENTRT_MAX_AGENT_DEPTH, AGENTRT_MAX_CHILDREN_PER_RUN): a run
# started by a client is at depth 0, its children at 1; a delegation that would start a run
# deeper than the bound, or more children than the bound in one run, is refused.
DEFAULT_MAX_AGENT_DEPTH = 3
DEFAULT_MAX_CHILDREN = 8
MAX_AGENT_DEPTH_LIMIT = 10
MAX_CHILDREN_LIMIT = 100

# The longest attempt bound a tool may declare (seconds), as a profile's write_seconds.
MAX_ATTEMPT_SECONDS = 3600.0


def checked_attempt_seconds(value: object, tool: str) -> float | None:
    """A tool's declared attempt bound, checked where the tool is made: None (none
    declared), or a number of seconds in (0, MAX_ATTEMPT_SECONDS]; anything else is a
    ValueError naming the tool."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"tool {tool!r}: attempt_seconds must be a number of seconds")
    if not 0 < value <= MAX_ATTEMPT_SECONDS:  # NaN fails this too
        raise ValueError(
            f"tool {tool!r}: attempt_seconds must be above 0 and at most {MAX_ATTEMPT_SECONDS:g}"
        )
    return float(value)


class ToolPlan(BaseModel):
    name: str
    effect: ToolEffect
    requires_approval: bool = False
    task_queue: str | None = None  # None: the workflow's queue (plans recorded before routing)
    # The tool has a reconcile probe: an interrupted write is asked about, not just failed.
    # Plans recorded before probes read False: those runs fail as they always did.
    reconcile: bool = False
    # The tool's own bound on one attempt of a write, in seconds (`@tool(attempt_seconds=)`,
    # or the MCP servers file's `attempt_seconds`): its write's time bound, and how long an
    # interrupted attempt may still land. None (every plan recorded before it): the
    # profile's `write_seconds`, the safe default.
    attempt_seconds: float | None = None
    # A child agent (a profile of `Profile.agents`): a call runs it as a child run; its
    # effect is the strongest of the child's tools. None: a tool (every earlier plan).
    agent: str | None = None
    # The worst case of one call the tool declares (a remote agent's skill, whose own
    # spend is not reported): reserved from a budgeted run's room before the call, counted
    # spent after. None: the tool spends nothing of the budget (every earlier plan).
    reserve: Allowance | None = None


class RunPlan(BaseModel):
    """The profile as resolved when the run began; recorded in history, so replay is stable."""

    profile: str
    model: str
    max_iterations: int
    tools: list[ToolPlan]
    privacy: PrivacyLevel
    timeouts: Timeouts
    approval_timeout_seconds: float | None = None
    four_eyes: bool = False
    # The profile's approval policy (name@version) when the run began: a replay asks the
    # same set. Plans recorded before it existed read None: a person decides.
    approval_policy: str | None = None
    # Plans recorded before it existed read "refuse": the safe side for a run deciding now.
    unattested_decisions: Literal["refuse", "allow"] = "refuse"
    answer_level: PrivacyLevel = "full"
    fallback_model: str | None = None
    budget: Budget | None = None  # absent in plans recorded before budgets existed
    model_task_queue: str | None = None  # None: the workflow's queue
    on_unknown_outcome: UnknownOutcome = "fail"
    # Plans recorded before it existed read 1: those runs go on one call at a time.
    max_parallel_tools: int = 1
    reconcile_timeout_seconds: float = DEFAULT_RECONCILE_TIMEOUT_SECONDS
    output_schema: dict[str, Any] | None = None  # None: a free-text answer
    output_retries: int = 0
    # Rounds per history segment: past them the run continues as new (workflows/
    # segments.py). Plans recorded before it existed read None: one segment, as ever.
    segment_rounds: int | None = None
    # The bound on each reply, in tokens, that every model request carries (the profile's
    # max_output_tokens; with a budget and none set, contracts/budget.py's default).
    # Plans recorded before it existed read None: their requests carry none.
    max_output_tokens: int | None = None
    # Bounds on delegations (contracts/agents.py), as the installation set them at begin.
    max_agent_depth: int = DEFAULT_MAX_AGENT_DEPTH
    max_children: int = DEFAULT_MAX_CHILDREN

    def tool(self, name: str) -> ToolPlan | None:
        return next((t for t in self.tools if t.name == name), None)
