"""Pauses for a human: an approval decision, or the remote user's follow-up input. A
waiting run holds no worker slot. Also the A2A projection after each committed change."""

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import call, error_type
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._details import decision_summary
from agentrt.workflows._loop import Stop, turn_digest

with workflow.unsafe.imports_passed_through():
    from agentrt.activities.a2a import A2AActivities
    from agentrt.activities.hitl import HitlActivities
    from agentrt.contracts.a2a import ProjectRequest
    from agentrt.contracts.approval import ApprovalDecision, PendingApproval
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.profiles import RunPlan
    from agentrt.contracts.run import (
        AddInputRequest,
        AwaitInputRequest,
        ResumeRequest,
        SuspendRequest,
    )


async def project(ctx: RunContext) -> None:
    """Show the committed state to the run's A2A task (idempotent per run revision)."""
    if ctx.task_id is None:
        return
    await call(
        A2AActivities.project,
        ProjectRequest(run_id=ctx.run_id, task_id=ctx.task_id),
        opt.store_call(),
        summary="project to A2A task",
    )


async def await_decision(ctx: RunContext, round_no: int, calls: list[ToolCall]) -> ApprovalDecision:
    """Suspend before any call of the turn runs, then wait for a decision on record."""
    plan = ctx.require_plan()
    pending = PendingApproval(
        turn_digest=turn_digest(calls), round=round_no, calls=calls, requested_at=workflow.now()
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
        refusal = await _record_decision(ctx, plan, round_no, decision)
        if refusal is None:
            break
        # Refused by the resume activity (no valid attestation): the turn stays open and
        # the run waits on. Only runs that met such a decision take this path, so the
        # commands of recorded histories are unchanged.
        ctx.gate.reject(decision)
        ctx.note_refusal(ctx.gate.refusal(decision, refusal, run_id=ctx.run_id, at=workflow.now()))
        workflow.logger.warning("decision refused: %s", refusal)
    ctx.recorded.add(decision.turn_digest)
    ctx.details.decided(decision, round_no)
    ctx.gate.close_turn()
    set_status(RunStatus.RUNNING)
    await project(ctx)
    return decision


async def _suspend(ctx: RunContext, plan: RunPlan, pending: PendingApproval) -> None:
    # Open the gate before the suspension commits: a client that sees WAITING in the store
    # and decides at once must find the workflow ready to accept it.
    ctx.gate.open(pending)
    try:
        suspended = await call(
            HitlActivities.suspend,
            SuspendRequest(
                run_id=ctx.run_id,
                sequence=ctx.state.take_sequence(),
                pending=pending,
                iterations=ctx.state.iterations,
                usage=ctx.state.usage,
                privacy=plan.privacy,
            ),
            opt.bounded_store_call(),
            summary="suspend for approval",
            outage_seconds=plan.timeouts.store_outage_seconds,
        )
    except ActivityError as err:
        ctx.gate.close_turn()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=error_type(err)) from None
    if not suspended.applied:
        # Refused (e.g. cancelled first): never an unresumable waiting run.
        ctx.gate.close_turn()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=ErrorType.SUSPEND_REFUSED)


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
            HitlActivities.resume,
            ResumeRequest(
                run_id=ctx.run_id,
                sequence=ctx.state.take_sequence(),
                round=round_no,
                decision=decision,
                privacy=plan.privacy,
                attested_only=plan.unattested_decisions != "allow",
            ),
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


async def await_input(ctx: RunContext, round_no: int) -> None:
    """The model asked the remote user for more: wait for the follow-up and record it."""
    ctx.input.open()
    try:
        waiting = await call(
            HitlActivities.await_input,
            AwaitInputRequest(
                run_id=ctx.run_id,
                sequence=ctx.state.take_sequence(),
                round=round_no,
                iterations=ctx.state.iterations,
                usage=ctx.state.usage,
                privacy=ctx.privacy,
            ),
            opt.bounded_store_call(),
            summary="wait for input",
            outage_seconds=ctx.require_plan().timeouts.store_outage_seconds,
        )
    except ActivityError as err:
        ctx.input.close()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=error_type(err)) from None
    if not waiting.applied:
        ctx.input.close()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=ErrorType.SUSPEND_REFUSED)
    set_status(RunStatus.WAITING_FOR_INPUT)
    ctx.details.waiting_for_input(round_no)
    await project(ctx)
    await workflow.wait_condition(lambda: ctx.input.message is not None or ctx.cancel_requested())
    ctx.check_cancel()
    message = ctx.input.message
    assert message is not None
    added = await call(
        HitlActivities.add_input,
        AddInputRequest(
            run_id=ctx.run_id,
            sequence=ctx.state.take_sequence(),
            round=round_no,
            message=message,
            privacy=ctx.privacy,
        ),
        opt.store_call(),
        summary="record input",
        fails_as=TerminationReason.INTERNAL_ERROR,
    )
    ctx.input.close(recorded=message if added.applied else None)
    if not added.applied:
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.INPUT_REFUSED)
    set_status(RunStatus.RUNNING)
    await project(ctx)
