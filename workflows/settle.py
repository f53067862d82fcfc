"""Settling a run, the workflow's side: every way a run ends goes through here.

- Completed: the terms each model turn is judged on (the one decision,
  contracts.turn.turn_end, which the model activity applies too: on the answer it completes
  the run, activities/settle/completion.py); `complete` ends the run that answered.
- Failed: `stop`, a guarded settle to FAILED (`run.fail`, activities/settle).
- Cancelled: a cancel request (the `cancel` signal, from `agentrt cancel` and the facade, or
  Temporal's own cancel) interrupts the loop at its next await, and `cancelled` settles the
  run CANCELLED in a guarded write that no further cancellation cuts short.

Terminal is terminal: a settle that finds the run COMPLETED (its answer got there first)
ends it completed. The workflow's own outcome mirrors the run's, so Temporal Web tells
operators the truth."""

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agentrt.workflows import _options as opt
from agentrt.workflows import riding
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._loop import Stop, guardrail_stop, may_pause_for_input
from agentrt.workflows.a2a import project

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.approval import CancelRequest
    from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_RUN_SETTLE
    from agentrt.contracts.run import (
        AnswerTerms,
        ModelResult,
        RunResult,
        SettleRequest,
        Transition,
    )
    from agentrt.contracts.turn import TurnEnd

# By its frozen name (`run.fail`): its module (activities/settle) holds the SQL.
SETTLE = ActivityRef[SettleRequest, Transition](ACT_RUN_SETTLE, Transition)

_FAILED_COMPLETION = {
    ErrorType.RESULT_NOT_RETAINABLE.value: TerminationReason.RESULT_NOT_RETAINABLE,
    ErrorType.STORE_UNAVAILABLE.value: TerminationReason.STORE_UNAVAILABLE,
}


def answer_terms(ctx: RunContext, round_no: int, *, offer_tools: bool) -> AnswerTerms:
    """The terms the next model turn is judged on, here and in the model activity. Should
    the turn be the answer, the activity completes the run on them: the completion's
    sequence is the next one (taken by `complete`)."""
    plan = ctx.require_plan()
    ctx.answer_reason = (
        TerminationReason.ANSWERED if offer_tools else TerminationReason.MAX_ITERATIONS
    )
    return AnswerTerms(
        sequence=ctx.state.next_sequence,
        usage=ctx.state.usage,
        pause_for_input=offer_tools and may_pause_for_input(ctx.task_id, round_no, plan),
        budget=plan.budget,
        output_schema=ctx.output_schema,
    )


# Runs with an output schema judge an answer on it and may loop on an invalid one; asked
# only in such runs, so every other run's history is as before.
TYPED_OUTPUT = "typed-output"


def typed_output(ctx: RunContext) -> None:
    """Take the plan's output schema into force (once, as the loop starts)."""
    plan = ctx.require_plan()
    if plan.output_schema is not None and ctx.patches.on(TYPED_OUTPUT):
        ctx.output_schema = plan.output_schema
        ctx.output_retries = plan.output_retries


def invalid_output(ctx: RunContext) -> None:
    """An answer failed the output schema: the model activity recorded why at the
    completion's sequence, taken here. The loop asks the model again while retries last;
    then the run fails, typed."""
    ctx.state.take_sequence()
    if ctx.output_retries <= 0:
        raise Stop(TerminationReason.INVALID_OUTPUT, error_type=ErrorType.INVALID_OUTPUT)
    ctx.output_retries -= 1


def turn_stop(end: TurnEnd, turn: ModelResult) -> Stop | None:
    """The stop a turn's end demands, if any: its guardrail's, or the spent budget's."""
    if end is TurnEnd.GUARDRAIL:
        return guardrail_stop(turn.guardrail)
    if end is TurnEnd.BUDGET:
        return Stop(TerminationReason.BUDGET_EXHAUSTED, error_type=ErrorType.BUDGET_EXHAUSTED)
    return None


async def complete(ctx: RunContext, reason: TerminationReason) -> RunResult:
    """End the run its last model turn answered: that turn's activity completed it, on
    this workflow's terms (`answer_terms`), and reported how."""
    ctx.state.take_sequence()  # the completion event's (AnswerTerms.sequence)
    # (No completion reported for an answer would be a model activity of another build.)
    settled = ctx.settled or Transition(applied=False, error=ErrorType.COMPLETION_FAILED.value)
    if settled.error is not None:
        # Never COMPLETED without its answer: the run fails instead.
        kind = settled.error
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
    return await finish(ctx, result_of(ctx, RunStatus.COMPLETED, Outcome.COMPLETED, reason))


async def stop(ctx: RunContext, why: Stop) -> RunResult:
    result = await settle(ctx, why)
    if result.status is RunStatus.COMPLETED and why.status is not RunStatus.COMPLETED:
        return result  # the run's answer completed it first (see completed_first)
    raise ApplicationError(
        f"run {why.status.value.lower()}: {why.reason.value}",
        result.model_dump(mode="json"),
        type=ErrorType.RUN_FAILED.value,
        non_retryable=True,
    )


async def settle(
    ctx: RunContext, why: Stop, actor: str | None = None, note: str | None = None
) -> RunResult:
    settled = await write_settle(ctx, why, actor, note)
    if completed_first(settled):
        return await finish(ctx, completed_result(ctx))
    return await finish(ctx, result_of(ctx, why.status, why.outcome, why.reason))


def completed_first(settled: Transition | None) -> bool:
    """A stop or cancel that found the run COMPLETED: the model activity completed it on
    its answer while the workflow was being cancelled (or the activity's result was lost
    to the cancel). Terminal is terminal: the run ends completed, in Temporal too."""
    return settled is not None and not settled.applied and settled.status is RunStatus.COMPLETED


def completed_result(ctx: RunContext) -> RunResult:
    # Totals as the workflow knows them: an answer whose result the cancel cut off is in
    # the store's totals, not in these.
    reason = ctx.answer_reason or TerminationReason.ANSWERED
    return result_of(ctx, RunStatus.COMPLETED, Outcome.COMPLETED, reason)


async def write_settle(
    ctx: RunContext, why: Stop, actor: str | None = None, note: str | None = None
) -> Transition | None:
    """The guarded terminal write, retried until the store takes it (settle_call), after
    the reads no model call took (workflows/riding.py)."""
    await riding.flush(ctx)
    if why.already_settled:
        return None
    st = ctx.state
    return await call(
        SETTLE,
        SettleRequest(
            run_id=ctx.run_id,
            privacy=ctx.privacy,
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
            budget=ctx.require_plan().budget,
            worst_case=why.worst_case,
            room=why.room,
        ),
        opt.settle_call(),
        summary=f"settle {why.status.value}",
    )


async def finish(ctx: RunContext, result: RunResult) -> RunResult:
    await project(ctx)
    ctx.finished = True
    ctx.gate.closed = True
    ctx.reconcile.closed = True
    ctx.input.closed = True
    set_status(result.status)
    await workflow.wait_condition(workflow.all_handlers_finished)
    return result


def result_of(
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


# --- cancel ------------------------------------------------------------------------------

# A cancel by signal (agentrt cancel, the facade) is followed by Temporal's own cancel
# request, which alone lets a workflow close CANCELED (a workflow cannot cancel itself).
# Once a patch; 0.3.x histories carry its marker, so it stays deprecated (README,
# "Support window").
SIGNAL_CANCEL_CLOSES_CANCELED = "signal-cancel-closes-canceled"
NATIVE_CANCEL_GRACE = timedelta(seconds=10)


def take_cancel(ctx: RunContext, request: Any, loop: "asyncio.Task[Any] | None") -> None:
    """The `cancel` signal: the first request of a live run is kept (its `by` and `reason`
    go into the settle's event) and the loop is cancelled at its next await."""
    if not isinstance(request, CancelRequest):  # a JSON null arrives as None
        workflow.logger.warning("cancel refused: the signal's payload is not a request")
        return
    if ctx.cancel is not None or ctx.finished:
        return
    ctx.cancel = request
    if loop is not None and not loop.done():
        loop.cancel()


async def cancelled(ctx: RunContext) -> RunResult:
    """Settle the cancelled run CANCELLED (or COMPLETED, if its answer got there first)."""
    native = workflow.cancellation_reason()
    request = ctx.cancel or CancelRequest(by="temporal", reason=native or None)
    why = Stop(TerminationReason.CANCELLED, status=RunStatus.CANCELLED)
    if native is not None:
        # Temporal's own cancel: already delivered, so nothing cuts the settle short.
        result = await settle(ctx, why, actor=request.by, note=request.reason)
        if result.status is RunStatus.COMPLETED:
            return result  # the run's answer completed it first
        raise asyncio.CancelledError()  # the workflow shows Canceled in Temporal Web
    ctx.patches.deprecated(SIGNAL_CANCEL_CLOSES_CANCELED)
    # Cancelled by signal: Temporal's cancel follows, and must not cut the settle short.
    settled = await shield_until_done(write_settle(ctx, why, actor=request.by, note=request.reason))
    if completed_first(settled):
        return await finish(ctx, completed_result(ctx))
    await _native_cancel(NATIVE_CANCEL_GRACE)
    await finish(ctx, result_of(ctx, why.status, why.outcome, why.reason))
    if workflow.cancellation_reason() is not None:
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
