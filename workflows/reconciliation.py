"""A person answers for an interrupted write (`on_unknown_outcome: ask`), the workflow side.

A write whose outcome stays unknown (no probe, or no answer from it: workflows/fence.py)
puts the run in AWAITING_RECONCILIATION: one guarded transition, then a wait on a
condition with the profile's `reconcile_timeout_seconds` as its timer. No activity runs
while it waits, so the run holds no worker. The `reconcile` (or `answer`) update brings
the answer by the one path of workflows/answers.py; the workflow takes one per wait (the
reconcile gate, workflows/pauses_gate.py, refuses a stale or second one) and the activity
records it in a guarded UPDATE with the audit event naming the principal
(activities/fence/answer.py)."""

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import call, error_type
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._loop import Stop
from agentrt.workflows._refs import AWAIT_ANSWER, RECORD_ANSWER
from agentrt.workflows.a2a import project

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.reconcile import APPLIED, NOT_APPLIED, Verdict
    from agentrt.contracts.reconcile_answer import (
        AwaitReconcileRequest,
        ReconcileAnswer,
        ReconciledRequest,
        fence_id,
    )
    from agentrt.contracts.run import ToolCallRequest, Transition

# --- the wait -----------------------------------------------------------------------------


async def ask(ctx: RunContext, write: ToolCallRequest, cannot_land_after: datetime) -> Verdict:
    """Wait for a person's answer on `write` (interrupted, its fence outcome_unknown) and
    record it. APPLIED: the write's step is recorded (the person's result, or the error
    result they chose); NOT_APPLIED: the fence is emptied and the write may run again,
    from `cannot_land_after` on (the interrupted attempt can no longer land). Giving up,
    the timeout or a wait that cannot be entered stop the run."""
    plan = ctx.require_plan()
    gate, c = ctx.reconcile, write.call
    await _enter_wait(ctx, write)
    deadline = workflow.now() + timedelta(seconds=plan.reconcile_timeout_seconds)
    while True:
        given = await _answer(ctx, deadline)
        record = ReconciledRequest(
            run_id=ctx.run_id, sequence=ctx.state.take_sequence(), privacy=plan.privacy,
            write=write, answer=given,
        )  # fmt: skip
        recorded = await call(
            RECORD_ANSWER, record,
            opt.store_call(), summary=f"record answer: {given.answer} by {given.answered_by}",
            fails_as=TerminationReason.INTERNAL_ERROR,
        )  # fmt: skip
        if recorded.applied:
            break
        if recorded.refusal is None:
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.RESUME_REFUSED)
        gate.reject(given)  # no valid attestation: the run waits on
        workflow.logger.warning("answer refused: %s", recorded.refusal)
    gate.done()
    ctx.details.reconciled(given.answer, given.answered_by)
    set_status(RunStatus.RUNNING)
    await project(ctx)
    if given.answer == "give_up":
        raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.RECONCILE_GIVEN_UP)
    if given.answer == "not_applied" and given.then == "retry":
        wait = cannot_land_after - workflow.now()
        if wait > timedelta(0):
            await workflow.sleep(wait, summary=f"until write {c.name} cannot land")
        return NOT_APPLIED
    return APPLIED


async def _enter_wait(ctx: RunContext, write: ToolCallRequest) -> None:
    """Open the reconcile gate on `write` and put the run in AWAITING_RECONCILIATION (one
    guarded transition); a wait that cannot be entered stops the run."""
    plan = ctx.require_plan()
    gate, c = ctx.reconcile, write.call
    assert write.fence_token is not None
    gate.four_eyes, gate.initiator = ctx.gate.four_eyes, ctx.gate.initiator
    gate.open(c.call_id, fence_id(write.fence_token), ctx.gate.approvers.get(write.round))
    request = AwaitReconcileRequest(
        run_id=ctx.run_id, sequence=ctx.state.take_sequence(), privacy=plan.privacy,
        round=write.round, call_id=c.call_id, tool=c.name,
        iterations=ctx.state.iterations, usage=ctx.state.usage,
    )  # fmt: skip
    try:
        entered = await call(
            AWAIT_ANSWER, request, opt.bounded_store_call(),
            summary=f"await reconciliation of {c.name}",
            outage_seconds=plan.timeouts.store_outage_seconds,
        )  # fmt: skip
    except ActivityError as err:
        workflow.logger.warning("cannot wait for an answer: %s", error_type(err))
        entered = Transition(applied=False)
    if not entered.applied:
        gate.closed = True
        raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.OUTCOME_UNKNOWN)
    set_status(RunStatus.AWAITING_RECONCILIATION)
    ctx.details.awaiting_reconciliation(plan, c.name, c.call_id)
    await project(ctx)


async def _answer(ctx: RunContext, deadline: datetime) -> ReconcileAnswer:
    """The answer the gate took; a cancel or the timeout stops the run."""
    gate = ctx.reconcile
    try:
        left = deadline - workflow.now()
        if left <= timedelta(0):
            raise TimeoutError
        await workflow.wait_condition(
            lambda: gate.answer is not None or ctx.cancel_requested(),
            timeout=left,
            timeout_summary="reconcile timeout",
        )
    except TimeoutError:
        gate.closed = True
        raise Stop(
            TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.RECONCILE_TIMEOUT
        ) from None
    ctx.check_cancel()
    given = gate.answer
    assert given is not None
    return given
