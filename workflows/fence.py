"""The write fence, workflow side: a non-idempotent write is stamped, scheduled once, and
after a failure the database is asked what really happened. Never retried once claimed.
The activities and their SQL: activities/fence."""

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType, ActivityConfig

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call, call_local, error_type
from agentrt.workflows._loop import Stop

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_FENCE_RESOLVE, ACT_FENCE_STAMP, ACT_WRITE_EXECUTE
    from agentrt.contracts.profiles import Timeouts
    from agentrt.contracts.run import (
        FenceRequest,
        FenceResult,
        FenceState,
        ToolCallRequest,
        ToolCallResult,
    )

# The fence's activities (activities/fence), by their frozen names: that package holds SQL.
STAMP = ActivityRef[FenceRequest, FenceResult](ACT_FENCE_STAMP, FenceResult)
RESOLVE = ActivityRef[FenceRequest, FenceResult](ACT_FENCE_RESOLVE, FenceResult)
WRITE = ActivityRef[ToolCallRequest, ToolCallResult](ACT_WRITE_EXECUTE, ToolCallResult)

# How often a write that no worker ever claimed may be scheduled again (fresh fence each).
MAX_WRITE_SCHEDULES = 5
# The stamp runs as a local activity, inside the workflow task that schedules the write:
# no activity task and no workflow task of its own. Runs recorded before this patch
# (0.3.x) scheduled it as an activity and replay so. Asked at a run's first write only, so
# a run without one records no marker for it.
LOCAL_STAMP = "fence-local-stamp"


def write_call(t: Timeouts) -> ActivityConfig:
    """A non-idempotent write: one attempt, and a cancel waits for it to finish."""
    return {
        "start_to_close_timeout": timedelta(seconds=t.write_seconds),
        "schedule_to_start_timeout": timedelta(seconds=t.schedule_to_start_seconds),
        "heartbeat_timeout": timedelta(seconds=t.write_heartbeat_seconds),
        "retry_policy": RetryPolicy(maximum_attempts=1),
        "cancellation_type": ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }


async def fenced_write(
    request: ToolCallRequest,
    timeouts: Timeouts,
    check_cancel: Callable[[], None],
    *,
    task_queue: str | None = None,
) -> None:
    c = request.call
    for _ in range(MAX_WRITE_SCHEDULES):
        check_cancel()  # a cancel that lands before the stamp: the write never runs
        fence = FenceRequest(
            run_id=request.run_id, call_id=c.call_id, tool=c.name, token=str(workflow.uuid4())
        )
        stamped = await _stamp(fence)
        if stamped.state == FenceState.ALREADY_DONE:
            return  # a reset or a replay reached a finished write: never re-executed
        if stamped.state == FenceState.RUN_NOT_RUNNING:
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.RUN_NOT_RUNNING)
        if stamped.state != FenceState.STAMPED:
            raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.FENCE_REFUSED)
        try:
            await call(
                WRITE,
                request.model_copy(update={"fence_token": fence.token}),
                opt.on_queue(write_call(timeouts), task_queue),
                summary=f"write {c.name}",
            )
            return
        except ActivityError as err:
            workflow.logger.warning("write %s failed: %s", c.call_id, error_type(err))
        verdict = await call(RESOLVE, fence, opt.store_call(), summary=f"resolve {c.name}")
        if verdict.state == FenceState.ALREADY_DONE:
            return
        if verdict.state == FenceState.INTERRUPTED:
            raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.OUTCOME_UNKNOWN)
        # NEVER_CLAIMED: nothing happened; schedule again under a fresh fence.
        await workflow.sleep(timedelta(seconds=1))
    raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.WRITE_NEVER_STARTED)


async def _stamp(fence: FenceRequest) -> FenceResult:
    """At most once does not rest on this step's place in history: the stamp refuses a call
    whose step is recorded (the ledger check) and only its own token can claim the fence.
    A local stamp that runs again (its worker died before the task completed, or a reset
    re-ran the task) is answered from the database like any other."""
    summary = f"fence {fence.tool}"
    if workflow.patched(LOCAL_STAMP):
        return await call_local(STAMP, fence, opt.local_store_call(), summary=summary)
    return await call(STAMP, fence, opt.store_call(), summary=summary)
