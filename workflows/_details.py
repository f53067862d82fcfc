"""What Temporal Web shows as a run's "Current Details" and the decision step's summary.

Current details are answered from workflow state by the SDK's metadata query: they are no
command and never enter history, so setting them is replay-safe. They carry metadata only,
never prompts, arguments or answers. Tool names count as metadata (the `metadata` privacy
level keeps them in events); at `none` the details give only the number of calls.
"""

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.approval import ApprovalDecision, PendingApproval
    from agentrt.contracts.plan import RunPlan

UNAUTHENTICATED = "unauthenticated:"  # as the store labels a decider it cannot verify


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M UTC")


def tools_shown(plan: RunPlan, pending: PendingApproval) -> str:
    n = len(pending.calls)
    if plan.privacy == "none":
        return f"{n} tool call" + ("s" if n != 1 else "")
    return ", ".join(c.name for c in pending.calls)


def decider(decision: ApprovalDecision) -> str:
    """The decider as the summary shows it: a decision without the operator API's
    attestation is labelled unauthenticated, as the audit event records it. (The store
    checks the attestation; the audit event, not this label, is the record.)"""
    if decision.attestation:
        return decision.decided_by
    return UNAUTHENTICATED + decision.decided_by


class Details:
    """The status line and the last decision, joined into the current details."""

    def __init__(self) -> None:
        self._status = ""
        self._last_decision = ""

    def _show(self) -> None:
        lines = [self._status] + ([self._last_decision] if self._last_decision else [])
        workflow.set_current_details("\n\n".join(line for line in lines if line))

    def running(self, plan: RunPlan, round_no: int) -> None:
        self._status = f"running {plan.profile}: round {round_no} of {plan.max_iterations}"
        self._show()

    def waiting_for_approval(self, plan: RunPlan, pending: PendingApproval) -> None:
        self._status = (
            f"waiting for approval: {tools_shown(plan, pending)}, round {pending.round}, "
            f"since {_clock(pending.requested_at)}"
        )
        self._show()

    def decided(self, decision: ApprovalDecision, round_no: int) -> None:
        verdict = "approved" if decision.approved else "denied"
        self._last_decision = (
            f"last decision: {verdict} by {decider(decision)}, round {round_no}, "
            f"at {_clock(workflow.now())}"
        )
        self._status = "resuming after the decision"
        self._show()

    def awaiting_reconciliation(self, plan: RunPlan, tool: str, call_id: str) -> None:
        shown = "a write" if plan.privacy == "none" else f"write {tool} (call {call_id})"
        self._status = (
            f"awaiting reconciliation: {shown} has an unknown outcome; an operator says what "
            f"the target shows, since {_clock(workflow.now())}"
        )
        self._show()

    def reconciled(self, answer: str, answered_by: str) -> None:
        self._last_decision = (
            f"last answer on a write: {answer} by {answered_by}, at {_clock(workflow.now())}"
        )
        self._status = "resuming after the answer"
        self._show()

    def waiting_for_input(self, round_no: int) -> None:
        self._status = (
            f"waiting for the user's input, round {round_no}, since {_clock(workflow.now())}"
        )
        self._show()


def decision_summary(decision: ApprovalDecision) -> str:
    verdict = "approve" if decision.approved else "deny"
    return f"record decision: {verdict} by {decider(decision)}"
