"""The approval pause, the workflow side: suspend before any call of a turn that needs
approval runs and wait for a decision on record. The input pause (workflows/input_pause.py)
is re-exported here: the run's loop calls both as `pauses`. A waiting run holds no worker
slot. The updates that feed the pauses take the one path of workflows/answers.py (the
`approve` signal, fire and forget, is checked here); their pure state is the one gate's
(workflows/gate.py, workflows/pauses_gate.py), the transitions are in activities/pauses.py."""

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows import policy
from agentrt.workflows._calls import ActivityRef, call, error_type
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._details import decision_summary
from agentrt.workflows._loop import Stop, turn_digest
from agentrt.workflows.a2a import project
from agentrt.workflows.input_pause import await_input as await_input
from agentrt.workflows.pause_record import enter, pause_fields, progress_fields

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.approval import ApprovalDecision, PendingApproval, reason_missing
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_RUN_RESUME, ACT_RUN_SUSPEND
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.pauses import ResumeRequest, SuspendRequest
    from agentrt.contracts.plan import RunPlan
    from agentrt.contracts.run import Transition

# The approval's transitions (activities/pauses.py), by their frozen names: that module
# holds SQL, which workflow code does not import.
SUSPEND = ActivityRef[SuspendRequest, Transition](ACT_RUN_SUSPEND, Transition)
RESUME = ActivityRef[ResumeRequest, Transition](ACT_RUN_RESUME, Transition)


# A denial by signal without a reason is refused from this build on (workflow.patched: a
# run of an earlier build accepted one, and its replay must too).
DENY_NEEDS_REASON = "deny-needs-reason"

# --- the handlers -------------------------------------------------------------------------


def decide_by_signal(ctx: RunContext, raw: RawValue) -> None:
    """The `approve` signal: checked like the update; a refusal is kept for the sender to
    read (query `refused_decisions`). The payload is decoded here: the SDK would drop a bad
    one with a logged traceback."""
    try:
        decision = workflow.payload_converter().from_payload(raw.payload, ApprovalDecision)
    except Exception as exc:
        decision, why = None, type(exc).__name__
    else:
        why = type(decision).__name__  # a JSON null decodes to None, unvalidated
    if not isinstance(decision, ApprovalDecision):
        workflow.logger.warning(
            "decision refused: the signal's payload is not a decision (%s)", why
        )
        return
    # A denial without a reason is refused, as on every other path. Asked through a patch,
    # and only of such a denial: a run of an earlier build took it (its history holds no
    # marker), and replays as it did.
    if reason_missing(decision.approved, decision.reason) and workflow.patched(DENY_NEEDS_REASON):
        refusal = ErrorType.REASON_REQUIRED.value
        ctx.note_refusal(ctx.gate.refusal(decision, refusal, run_id=ctx.run_id, at=workflow.now()))
        workflow.logger.warning("decision by signal refused: %s", refusal)
        return
    if policy.refuse_signalled(ctx, decision):
        return
    refused = ctx.gate.take_signalled(decision, run_id=ctx.run_id, at=workflow.now())
    if refused is None:
        return
    ctx.note_refusal(refused)
    workflow.logger.warning("decision by signal refused: %s", refused.refusal)


# --- the pauses ---------------------------------------------------------------------------


async def await_decision(ctx: RunContext, round_no: int, calls: list[ToolCall]) -> ApprovalDecision:
    """Suspend before any call of the turn runs, then wait for a decision on record."""
    plan = ctx.require_plan()
    digest = turn_digest(calls)
    verdict = await policy.judged(ctx, round_no, calls, digest)
    if verdict is not None and verdict.decision is not None:  # the policy decided: on record
        return _decided(ctx, verdict.decision, round_no)
    ctx.gate.needed = verdict.approvers if verdict is not None else 1
    pending = PendingApproval(
        turn_digest=digest, round=round_no, calls=calls, requested_at=workflow.now()
    )
    await _suspend(ctx, plan, pending)
    set_status(RunStatus.WAITING_FOR_APPROVAL)
    ctx.details.waiting_for_approval(plan, pending)
    await project(ctx)
    # The approval timeout runs from here, however many refused decisions come meanwhile.
    limit = plan.approval_timeout_seconds
    deadline = workflow.now() + timedelta(seconds=limit) if limit else None
    while True:
        decision = await _decision(ctx, plan, deadline)
        if policy.needs_more(ctx, decision):
            request = _resume(ctx, plan, round_no, decision)
            refusal = await policy.record_partly(ctx, request)
            if refusal is None:
                ctx.gate.approved_partly(decision)
                continue
        else:
            refusal = await _record_decision(ctx, plan, round_no, decision)
        if refusal is None:
            break
        # Refused by the resume activity (no valid attestation): the turn stays open and
        # the run waits on. Only runs that met such a decision take this path, so the
        # commands of recorded histories are unchanged.
        ctx.gate.reject(decision)
        ctx.note_refusal(ctx.gate.refusal(decision, refusal, run_id=ctx.run_id, at=workflow.now()))
        workflow.logger.warning("decision refused: %s", refusal)
    ctx.gate.recorded.add(decision.turn_digest)
    _decided(ctx, decision, round_no)
    set_status(RunStatus.RUNNING)
    await project(ctx)
    return decision


def _decided(ctx: RunContext, decision: ApprovalDecision, round_no: int) -> ApprovalDecision:
    if decision.approved:
        ctx.gate.approvers[round_no] = decision.decided_by
    ctx.details.decided(decision, round_no)
    ctx.gate.close_turn()
    return decision


async def _suspend(ctx: RunContext, plan: RunPlan, pending: PendingApproval) -> None:
    # Open the gate before the suspension commits: a client that sees WAITING in the store
    # and decides at once must find the workflow ready to accept it.
    ctx.gate.open(pending)
    request = SuspendRequest(pending=pending, **progress_fields(ctx, plan))
    await enter(plan, SUSPEND, request, "suspend for approval", ctx.gate.close_turn)


async def _decision(ctx: RunContext, plan: RunPlan, deadline: datetime | None) -> ApprovalDecision:
    """The decision the gate accepted; a cancel or the approval timeout stops the run."""
    limit = plan.approval_timeout_seconds
    # The first wait asks for exactly the limit, as recorded histories' timers do.
    timeout = timedelta(seconds=limit) if limit else None
    if deadline is not None and timeout is not None and workflow.now() + timeout > deadline:
        timeout = deadline - workflow.now()
    try:
        if timeout is not None and timeout <= timedelta(0):
            raise TimeoutError
        await workflow.wait_condition(
            lambda: ctx.gate.decision is not None or ctx.cancel_requested(),
            timeout=timeout,
            timeout_summary="approval timeout",
        )
    except TimeoutError:
        ctx.gate.closed = True
        raise Stop(
            TerminationReason.APPROVAL_TIMEOUT, error_type=ErrorType.APPROVAL_TIMEOUT
        ) from None
    ctx.check_cancel()
    decision = ctx.gate.decision
    assert decision is not None
    return decision


async def _record_decision(
    ctx: RunContext, plan: RunPlan, round_no: int, decision: ApprovalDecision
) -> str | None:
    """None once the decision is on record; the refusal (an ErrorType value) when the
    activity refused it and the run still waits."""
    try:
        resumed = await call(
            RESUME,
            _resume(ctx, plan, round_no, decision),
            opt.store_call(),
            summary=decision_summary(decision),
        )
    except ActivityError as err:
        # Fail closed: a decision that is not on record releases no write.
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type=error_type(err)) from None
    if not resumed.applied and resumed.refusal is not None:
        return resumed.refusal
    if not resumed.applied:
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.RESUME_REFUSED)
    return None


def _resume(
    ctx: RunContext, plan: RunPlan, round_no: int, decision: ApprovalDecision
) -> ResumeRequest:
    attested_only = plan.unattested_decisions != "allow"
    return ResumeRequest(
        round=round_no, decision=decision, attested_only=attested_only, **pause_fields(ctx, plan)
    )
