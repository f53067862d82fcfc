"""Approval policies (issue 44, item 3): the names and payloads the workflow, the policy
activity and the views share. A policy set is Cedar text with a name and a version; a
profile names one as `name@version` (`Profile.approval_policy`), and the run's plan keeps
that reference, so a replay asks the same set. The outcome of a turn is allow (approved by
the policy, no person), deny, or ask (N distinct people; 1 when the policy erred)."""

from typing import Literal

from pydantic import BaseModel, Field

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.pauses import PauseRequest

# A policy decides as `policy <name>@<version>`; no person may decide under that prefix.
POLICY_PREFIX = "policy "
MAX_APPROVERS = 5
# The Cedar actions a policy set permits, asked in this order for each call: `deny` first
# (a permitted deny wins), then `approve` (the call approves itself), then `ask_N` (the
# largest N permitted is how many distinct people must approve). None permitted: one person.
ACTION_DENY = "deny"
ACTION_APPROVE = "approve"
ASK_ACTIONS = {f"ask_{n}": n for n in range(2, MAX_APPROVERS + 1)}

Outcome = Literal["allow", "deny", "ask"]


def decider(ref: str) -> str:
    """How a policy's decision names its decider in events and every view."""
    return POLICY_PREFIX + ref


def is_policy_decider(name: str) -> bool:
    """Whether `name` claims to be a policy: never a person's name (refused from one)."""
    return name.strip().lower().startswith(POLICY_PREFIX.strip())


def parse_ref(ref: str) -> tuple[str, str]:
    """`name@version` as its two parts; a ValueError naming what is wrong."""
    name, at, version = ref.strip().partition("@")
    if not at or not name or not version or "@" in version:
        raise ValueError(f"approval policy {ref!r}: expected name@version, e.g. refunds@3")
    return name, version


class PolicyRequest(PauseRequest):
    """What the policy activity decides on: the turn's approval-bound calls, who started
    the run, its profile and its spend so far."""

    round: int
    policy: str  # name@version, from the run's plan
    profile: str
    initiator: str
    turn_digest: str
    calls: list[ToolCall]
    spend: Usage


class PolicyVerdict(BaseModel):
    """The policy's outcome, on record (an event) before the workflow acts on it. `decision`:
    the attested decision, for allow and deny; `approvers`: how many people, for ask."""

    outcome: Outcome
    approvers: int = Field(default=1, ge=1, le=MAX_APPROVERS)
    reason: str
    decision: ApprovalDecision | None = None
