"""Pure pieces of the agent loop: unit-testable without Temporal."""

import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum

from agentrt.contracts.budget import Allowance
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.plan import RunPlan


class Route(Enum):
    REFUSE = "refuse"  # not offered to this run: record a refusal, run nothing
    EXECUTE = "execute"  # read-only or idempotent write: normal retries
    FENCED_WRITE = "fenced_write"  # non-idempotent write: fence, claim, one attempt
    DELEGATE = "delegate"  # a child agent: a child run (workflows/children.py), no fence


def route(call: ToolCall, plan: RunPlan) -> tuple[Route, ToolEffect]:
    tool = plan.tool(call.name)
    if tool is None:
        return Route.REFUSE, ToolEffect.resolve(None)
    if tool.agent is not None:  # the child's own writes go behind the child's own fence
        return Route.DELEGATE, tool.effect
    if tool.effect is ToolEffect.NON_IDEMPOTENT_WRITE:
        return Route.FENCED_WRITE, tool.effect
    return Route.EXECUTE, tool.effect


def needs_approval(calls: list[ToolCall], plan: RunPlan) -> bool:
    """A turn suspends when any offered call in it is approval-bound."""
    return any((t := plan.tool(c.name)) is not None and t.requires_approval for c in calls)


def may_pause_for_input(task_id: str | None, round_no: int, plan: RunPlan) -> bool:
    """Whether an answer that asks the user for more information pauses the run for it:
    only a run serving an A2A task, and not in its last round."""
    return bool(task_id) and round_no < plan.max_iterations


def turn_digest(calls: list[ToolCall]) -> str:
    """SHA-256 over the pending calls only (not the transcript, not counters)."""
    canonical = json.dumps(
        [c.model_dump(mode="json") for c in calls], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class LoopState:
    next_sequence: int = 1
    iterations: int = 0
    usage: Usage = field(default_factory=Usage.none)  # zero calls: zero tokens, cost known
    truncated: bool = False

    def take_sequence(self) -> int:
        seq = self.next_sequence
        self.next_sequence += 1
        return seq


_OUTCOME_OF_REASON = {
    TerminationReason.POLICY_DENIED: Outcome.GUARDRAIL_BLOCKED,
    TerminationReason.APPROVAL_DENIED: Outcome.GUARDRAIL_APPROVAL_REQUIRED,
    TerminationReason.SUSPEND_FAILED: Outcome.SUSPEND_FAILED,
}


@dataclass(frozen=True)
class Stop(Exception):
    """Ends the loop early with a settled status (raised inside the workflow only)."""

    reason: TerminationReason
    status: RunStatus = RunStatus.FAILED
    error_type: str | None = None
    already_settled: bool = False
    detail: str | None = None  # the provider's reason, for the run_failed event
    # A budget stop before a model call: its worst case (None: unknown) and the room left.
    worst_case: Usage | None = None
    room: Allowance | None = None

    @property
    def outcome(self) -> Outcome:
        if self.status is RunStatus.CANCELLED:
            return Outcome.CANCELLED
        return _OUTCOME_OF_REASON.get(self.reason, Outcome.FAILED)


def guardrail_stop(verdict: str) -> Stop | None:
    """The stop a guardrail verdict demands, if any (ALLOW and REDACT let the run go on)."""
    if verdict == "DENY":
        return Stop(TerminationReason.POLICY_DENIED, error_type=ErrorType.GUARDRAIL_DENIED)
    if verdict == "REQUIRE_APPROVAL":
        return Stop(
            TerminationReason.APPROVAL_DENIED, error_type=ErrorType.GUARDRAIL_APPROVAL_REQUIRED
        )
    return None
