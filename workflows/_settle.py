"""Ending a run: completion in one transaction, or a guarded settle to FAILED / CANCELLED.
The workflow's own outcome mirrors the run's, so Temporal Web tells operators the truth."""

import asyncio
from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import call, call_local, error_type
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._loop import Stop
from agentrt.workflows._pauses import project

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.activities.run import RunActivities
    from agentrt.contracts.approval import CancelRequest
    from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.run import CompleteRequest, FailRequest, RunResult, Transition


_FAILED_COMPLETION = {
    ErrorType.RESULT_NOT_RETAINABLE.value: TerminationReason.RESULT_NOT_RETAINABLE,
    ErrorType.STORE_UNAVAILABLE.value: TerminationReason.STORE_UNAVAILABLE,
}
# A cancel by signal (agentrt cancel, the facade) is followed by Temporal's own cancel
# request, which alone lets a workflow close CANCELED (a workflow cannot cancel itself).
# Once a patch; 0.3.x histories carry its marker, so it stays deprecated (README,
# "Support window").
SIGNAL_CANCEL_CLOSES_CANCELED = "signal-cancel-closes-canceled"
NATIVE_CANCEL_GRACE = timedelta(seconds=10)
T = TypeVar("T")


async def complete(ctx: RunContext, answer_seq: int, reason: TerminationReason) -> RunResult:
    st = ctx.state
    request = CompleteRequest(
        run_id=ctx.run_id,
        sequence=st.take_sequence(),
        answer_sequence=answer_seq,
        iterations=st.iterations,
        truncated=st.truncated,
        termination_reason=reason,
        usage=st.usage,
        privacy=ctx.privacy,
    )
    outage = ctx.require_plan().timeouts.store_outage_seconds
    settled = ctx.settled  # made by the model activity on its answer, if it made it
    if settled is not None and settled.error is not None:
        kind = settled.error  # never COMPLETED without its answer: the run fails instead
        return await stop(
            ctx,
            Stop(
                _FAILED_COMPLETION.get(kind, TerminationReason.COMPLETION_FAILED), error_type=kind
            ),
        )
    if settled is None:
        try:
            # Idempotent, so safe to run again should the worker die before its marker
            # lands: a completed run answers "not applied, COMPLETED" (handled below).
            settled = await call_local(
                RunActivities.complete,
                request,
                opt.local_completion_call(),
                summary="complete",
                outage_seconds=outage,
            )
        except ActivityError as err:
            # Never COMPLETED without its answer: the run fails instead.
            kind = error_type(err)
            failed = _FAILED_COMPLETION.get(kind, TerminationReason.COMPLETION_FAILED)
            return await stop(ctx, Stop(failed, error_type=kind))
    if not settled.applied and settled.status is not RunStatus.COMPLETED:
        return await stop(
            ctx,
            Stop(
                TerminationReason.INTERNAL_ERROR,
                status=settled.status or RunStatus.FAILED,
                error_type=ErrorType.ALREADY_SETTLED,
                already_settled=True,
            ),
        )
    # (Not applied but COMPLETED: an earlier execution — a reset — completed it.)
    return await _finish(ctx, _result(ctx, RunStatus.COMPLETED, Outcome.COMPLETED, reason))


async def stop(ctx: RunContext, why: Stop) -> RunResult:
    result = await _settle(ctx, why)
    if result.status is RunStatus.COMPLETED and why.status is not RunStatus.COMPLETED:
        return result  # the run's answer completed it first (see _completed_first)
    raise ApplicationError(
        f"run {why.status.value.lower()}: {why.reason.value}",
        result.model_dump(mode="json"),
        type=ErrorType.RUN_FAILED.value,
        non_retryable=True,
    )


async def cancelled(ctx: RunContext) -> RunResult:
    native = workflow.cancellation_reason()
    request = ctx.cancel or CancelRequest(by="temporal", reason=native or None)
    why = Stop(TerminationReason.CANCELLED, status=RunStatus.CANCELLED)
    if native is None:
        workflow.deprecate_patch(SIGNAL_CANCEL_CLOSES_CANCELED)
        # Cancelled by signal: Temporal's cancel follows, and must not cut the settle short.
        settled = await shield_until_done(
            _write_settle(ctx, why, actor=request.by, note=request.reason)
        )
        if _completed_first(ctx, settled):
            return await _finish(ctx, _completed_result(ctx))
        await _native_cancel(NATIVE_CANCEL_GRACE)
        await _finish(ctx, _result(ctx, why.status, why.outcome, why.reason))
        if workflow.cancellation_reason() is not None:
            raise asyncio.CancelledError()  # the workflow shows Canceled in Temporal Web
    else:
        result = await _settle(ctx, why, actor=request.by, note=request.reason)
        if result.status is RunStatus.COMPLETED:
            return result  # the run's answer completed it first
        if native is not None:
            raise asyncio.CancelledError()  # the workflow shows Canceled in Temporal Web
    raise ApplicationError(
        f"run cancelled by {request.by}", type=ErrorType.RUN_CANCELLED.value, non_retryable=True
    )


async def _native_cancel(within: timedelta) -> None:
    """Wait (bounded) for Temporal's own cancel request; a raw signal alone never sends one."""
    try:
        await workflow.wait_condition(
            lambda: workflow.cancellation_reason() is not None,
            timeout=within,
            timeout_summary="await Temporal's cancel",
        )
    except asyncio.CancelledError:
        pass  # it arrived: the one cancellation it brings is spent here, not on the settle
    except TimeoutError:
        workflow.logger.warning("cancel by signal without Temporal's cancel request")


async def _settle(
    ctx: RunContext, why: Stop, actor: str | None = None, note: str | None = None
) -> RunResult:
    settled = await _write_settle(ctx, why, actor, note)
    if _completed_first(ctx, settled):
        return await _finish(ctx, _completed_result(ctx))
    return await _finish(ctx, _result(ctx, why.status, why.outcome, why.reason))


def _completed_first(ctx: RunContext, settled: Transition | None) -> bool:
    """A stop or cancel that found the run COMPLETED: the model activity completed it on
    its answer while the workflow was being cancelled (or the activity's result was lost
    to the cancel). Terminal is terminal: the run ends completed, in Temporal too."""
    return settled is not None and not settled.applied and settled.status is RunStatus.COMPLETED


def _completed_result(ctx: RunContext) -> RunResult:
    # Totals as the workflow knows them: an answer whose result the cancel cut off is in
    # the store's totals, not in these.
    reason = ctx.answer_reason or TerminationReason.ANSWERED
    return _result(ctx, RunStatus.COMPLETED, Outcome.COMPLETED, reason)


async def _write_settle(
    ctx: RunContext, why: Stop, actor: str | None = None, note: str | None = None
) -> Transition | None:
    """The guarded terminal write, retried until the store takes it (settle_call)."""
    if why.already_settled:
        return None
    st = ctx.state
    return await call(
        RunActivities.fail,
        FailRequest(
            run_id=ctx.run_id,
            sequence=st.take_sequence(),
            reason=why.reason,
            iterations=st.iterations,
            usage=st.usage,
            error_type=why.error_type,
            status=why.status,
            outcome=why.outcome,
            actor=actor,
            note=note,
            error_detail=why.detail,
            privacy=ctx.privacy,
        ),
        opt.settle_call(),
        summary=f"settle {why.status.value}",
    )


async def _finish(ctx: RunContext, result: RunResult) -> RunResult:
    await project(ctx)
    ctx.finished = True
    ctx.gate.closed = True
    set_status(result.status)
    await workflow.wait_condition(workflow.all_handlers_finished)
    return result


def _result(
    ctx: RunContext, status: RunStatus, outcome: Outcome, reason: TerminationReason
) -> RunResult:
    st = ctx.state
    return RunResult(
        run_id=ctx.run_id,
        status=status,
        outcome=outcome,
        termination_reason=reason,
        iterations=st.iterations,
        truncated=st.truncated,
        usage=st.usage,
    )
