"""Approval policies, the activity side: judge a turn's approval-bound calls by the run's
policy set (core/policies.py, Cedar) and put the verdict on record before the workflow
acts on it. An allow or a deny is an APPROVAL event like a person's, decided by `policy
<name>@<version>` and attested under the seal key (a MAC of the policy claim); an ask (N
people, or one because the policy could not decide) is a POLICY_DECISION event, and the
run then suspends for people as ever. A policy set this worker does not hold, a request
Cedar cannot build, or a policy that errs: one person is asked, never an allow.

Also the partial approval: where a policy asks for N people, each approval but the last
is an APPROVAL event (`approvals: k of N`) with the run left waiting."""

from collections.abc import Mapping
from typing import Any

from temporalio import activity

from agentrt.activities._common import ActivityGroup, store_work
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_POLICY_DECIDE, ACT_RUN_APPROVE_PARTLY
from agentrt.contracts.pauses import ResumeRequest
from agentrt.contracts.policy import PolicyRequest, PolicyVerdict, decider
from agentrt.contracts.run import Transition
from agentrt.core.policies import (
    Asked,
    PolicyError,
    PolicySet,
    Verdict,
    check_against_tools,
    judge,
)
from agentrt.store.db.context import StoreContext
from agentrt.store.security import attest
from agentrt.store.steps.events import event_row, insert_event

_log = activity.logger


class PolicyActivities(ActivityGroup):
    def __init__(self, ctx: StoreContext, policies: Mapping[str, PolicySet]) -> None:
        self._ctx = ctx
        self._policies = dict(policies)

    @activity.defn(name=ACT_POLICY_DECIDE)
    @store_work
    def decide(self, req: PolicyRequest) -> PolicyVerdict:
        return decide(self._ctx, self._policies.get(req.policy), req)

    @activity.defn(name=ACT_RUN_APPROVE_PARTLY)
    @store_work
    def approve_partly(self, req: ResumeRequest) -> Transition:
        return approve_partly(self._ctx, req)


def _verdict(policy: PolicySet | None, req: PolicyRequest) -> tuple[Verdict, bool]:
    """The verdict, and whether the policy could decide at all (False: one person asked)."""
    if policy is None:
        return Verdict("ask", 1, f"policy {req.policy} is not loaded on this worker"), False
    asked = Asked(profile=req.profile, initiator=req.initiator, spend=req.spend)
    try:
        return judge(policy, req.calls, asked), True
    except PolicyError as exc:
        # Never an allow: the policy's error is on record, and a person decides.
        _log.warning("approval policy %s could not decide; asking a person", req.policy)
        return Verdict("ask", 1, f"policy error: {exc}"), False


def decide(ctx: StoreContext, policy: PolicySet | None, req: PolicyRequest) -> PolicyVerdict:
    """The verdict, on record in one transaction (a retried attempt writes the same event
    at the same sequence: the insert is idempotent on it)."""
    verdict, decided = _verdict(policy, req)
    if not decided and req.privacy not in ("full", "redacted"):
        # Cedar's words may quote an argument's value: kept only where content is.
        verdict = Verdict("ask", 1, f"policy error (detail withheld at privacy {req.privacy})")
    by = decider(req.policy)
    payload: dict[str, Any]
    decision: ApprovalDecision | None = None
    if verdict.outcome == "ask":
        payload = {
            "policy": req.policy, "decided_by": by, "outcome": "ask",
            "approvers": verdict.approvers, "reason": verdict.reason, "errored": not decided,
            "turn_digest": req.turn_digest,
        }  # fmt: skip
        kind = EventKind.POLICY_DECISION
    else:
        decision = ApprovalDecision(
            approved=verdict.outcome == "allow", decided_by=by,
            turn_digest=req.turn_digest, reason=verdict.reason,
        )  # fmt: skip
        decision.attestation = attest.attest_policy(ctx.sealer, req.run_id, decision)
        payload = {
            "approved": decision.approved, "decided_by": by, "authenticated": True,
            "turn_digest": req.turn_digest, "reason": verdict.reason, "policy": req.policy,
            "attestation": decision.attestation,
        }  # fmt: skip
        kind = EventKind.APPROVAL
    with ctx.sessions.begin() as s:
        row = event_row(ctx.sealer, req.run_id, req.sequence, kind, req.round, payload, req.privacy)
        insert_event(s, row)
    return PolicyVerdict(
        outcome=verdict.outcome, approvers=verdict.approvers, reason=verdict.reason,
        decision=decision,
    )  # fmt: skip


def approve_partly(ctx: StoreContext, req: ResumeRequest) -> Transition:
    """One of the people a policy asks for approved: an APPROVAL event, the run left
    waiting. Counted only attested, as the resume counts a decision."""
    waiting = RunStatus.WAITING_FOR_APPROVAL
    if req.attested_only and not attest.authenticated(ctx.sealer, req.run_id, req.decision):
        with ctx.sessions.begin() as s:
            row = event_row(
                ctx.sealer, req.run_id, req.sequence, EventKind.DECISION_REFUSED, req.round,
                attest.refusal(req.decision), req.privacy,
            )  # fmt: skip
            insert_event(s, row)
        return Transition(
            applied=False, status=waiting, refusal=ErrorType.UNATTESTED_DECISION.value
        )
    audit = {**attest.audit(ctx.sealer, req.run_id, req.decision), "partial": True}
    with ctx.sessions.begin() as s:
        row = event_row(
            ctx.sealer, req.run_id, req.sequence, EventKind.APPROVAL, req.round, audit,
            req.privacy,
        )  # fmt: skip
        insert_event(s, row)
    return Transition(applied=True, status=waiting)


def check_policies(
    policies: Mapping[str, PolicySet], catalog: ProfileCatalog, registry: ToolRegistry
) -> None:
    """At the worker's start (and `agentrt-worker --check`): each profile's policy over its
    approval-bound tools as listed then (core/policies.py `check_against_tools`); a
    ConfigError stops the worker. A toolbox not listed yet is checked by its runs only."""
    for name in catalog.names():
        profile = catalog.get(name)
        policy = policies.get(profile.approval_policy or "") if profile is not None else None
        if profile is None or policy is None:
            continue
        tools = [registry.get(t) for t in profile.tools]
        bound = [t.spec for t in tools if t is not None and profile.approval_binds(t.effect)]
        check_against_tools(policy, profile.name, bound)
