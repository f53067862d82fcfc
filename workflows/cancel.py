"""Cancel, the workflow's side: a cancel request (the `cancel` signal, from `agentrt
cancel` and the facade, or Temporal's own cancel) interrupts the loop at its next await,
and the run settles CANCELLED in a guarded write (activities/settle.py) that no further
cancellation cuts short. The workflow then closes Canceled in Temporal Web."""

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Stop
from agentrt.workflows.completion import (
    completed_first,
    completed_result,
    finish,
    result_of,
    settle,
    write_settle,
)

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.approval import CancelRequest
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.run import RunResult

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
