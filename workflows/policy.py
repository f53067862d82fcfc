"""Approval policies, the workflow side: before a turn suspends for people, the run's
policy set (its plan's `approval_policy`) judges it in an activity (Cedar is native code:
never here), whose verdict is in history, so a replay decides the same. An allow or a deny
is on record as the policy's decision and the turn goes on without a person; an ask sets
how many distinct people the turn needs. The activity failing asks one person: a policy
never approves by default."""

from temporalio import workflow
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.approval import ApprovalDecision
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_POLICY_DECIDE, ACT_RUN_APPROVE_PARTLY
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.pauses import ResumeRequest
    from agentrt.contracts.plan import RunPlan
    from agentrt.contracts.policy import PolicyRequest, PolicyVerdict, is_policy_decider
    from agentrt.contracts.run import Transition

DECIDE = ActivityRef[PolicyRequest, PolicyVerdict](ACT_POLICY_DECIDE, PolicyVerdict)
APPROVE_PARTLY = ActivityRef[ResumeRequest, Transition](ACT_RUN_APPROVE_PARTLY, Transition)

# A decision by signal claiming a policy as its decider is refused from this build on
# (the update's validator refuses it too); a patch, as DENY_NEEDS_REASON is.
POLICY_DECIDER_SIGNAL = "policy-decider-signal"

# The policy's activity in history: asked through a patch (a run of an earlier build that
# a replay meets took no such step), and only where the plan names a policy.
APPROVAL_POLICY = "approval-policy"


def _bound(calls: list[ToolCall], plan: RunPlan) -> list[ToolCall]:
    return [c for c in calls if (t := plan.tool(c.name)) is not None and t.requires_approval]


async def judged(
    ctx: RunContext, round_no: int, calls: list[ToolCall], digest: str
) -> PolicyVerdict | None:
    """The policy's verdict on the turn, on record; None where the run has no policy."""
    plan = ctx.require_plan()
    if plan.approval_policy is None or not workflow.patched(APPROVAL_POLICY):
        return None
    request = PolicyRequest(
        run_id=ctx.run_id, privacy=plan.privacy, sequence=ctx.state.take_sequence(),
        round=round_no, policy=plan.approval_policy, profile=plan.profile,
        initiator=ctx.gate.initiator, turn_digest=digest, calls=_bound(calls, plan),
        spend=ctx.state.usage,
    )  # fmt: skip
    try:
        return await call(DECIDE, request, opt.store_call(), summary="approval policy")
    except ActivityError:
        # Not on record: one person decides, as for a policy that erred.
        workflow.logger.warning("approval policy could not be asked; asking a person")
        return PolicyVerdict(outcome="ask", approvers=1, reason="policy could not be asked")


async def record_partly(ctx: RunContext, request: ResumeRequest) -> str | None:
    """One of the people the turn needs approved: None once on record (the run waits on for
    the next), else the refusal (an ErrorType value)."""
    done = await call(APPROVE_PARTLY, request, opt.store_call(), summary="approval (partial)")
    return None if done.applied else (done.refusal or "ResumeRefused")


def needs_more(ctx: RunContext, decision: ApprovalDecision) -> bool:
    """Whether an approval is one of several the turn needs, short of the last."""
    return decision.approved and len(ctx.gate.approved_by) + 1 < ctx.gate.needed


def refuse_signalled(ctx: RunContext, decision: ApprovalDecision) -> bool:
    """A person's signalled decision naming a policy as its decider: refused (kept for the
    sender to read), True; only the policy activity decides as a policy."""
    if not is_policy_decider(decision.decided_by) or not workflow.patched(POLICY_DECIDER_SIGNAL):
        return False
    kind = ErrorType.POLICY_DECIDER.value
    ctx.note_refusal(ctx.gate.refusal(decision, kind, run_id=ctx.run_id, at=workflow.now()))
    workflow.logger.warning("decision by signal refused: %s", kind)
    return True
