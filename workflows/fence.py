"""The write fence, workflow side: a non-idempotent write is stamped, scheduled once, and
after a failure the database is asked what really happened. Never retried once claimed,
unless its tool's probe says, once the attempt can no longer land, that it was not
applied (reconciliation, below). The activities and their SQL: activities/fence."""

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutType
from temporalio.exceptions import TimeoutError as ActivityTimeout
from temporalio.workflow import ActivityCancellationType, ActivityConfig

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import call, call_local, error_type, failure_of
from agentrt.workflows._loop import Stop
from agentrt.workflows._refs import PROBE, RESOLVE, STAMP, WRITE
from agentrt.workflows.patches import Patches

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.profiles import Timeouts
    from agentrt.contracts.reconcile import APPLIED, NOT_APPLIED, UNKNOWN, Verdict
    from agentrt.contracts.run import FenceRequest, FenceResult, FenceState, ToolCallRequest

# How often a write that no worker ever claimed may be scheduled again (fresh fence each).
MAX_WRITE_SCHEDULES = 5
# The stamp runs as a local activity, inside the workflow task that schedules the write:
# no activity task and no workflow task of its own. Runs recorded before this patch
# (0.3.x) scheduled it as an activity and replay so. Asked at a run's first write only, so
# a run without one records no marker for it.
LOCAL_STAMP = "fence-local-stamp"
# Reconciliation: asked only when a write with a probe was interrupted after its claim, so
# no other run records a marker for it, and runs recorded before it fail there as before.
RECONCILE = "fence-reconcile"
# A person answers (`on_unknown_outcome: ask`): asked only when the outcome stayed unknown
# in such a profile, so runs recorded before it, and "fail" runs, replay as they were.
ASK = "fence-ask"

# Waits for a person's answer on an interrupted write (workflows/reconciliation.py), given
# the request and when its attempt can no longer land.
Ask = Callable[[ToolCallRequest, datetime], Awaitable[Verdict]]


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
    reconcile: bool = False,
    ask: Ask | None = None,
    patches: Patches,
) -> None:
    """`reconcile`: the tool has a probe (the run plan says so). A write whose outcome
    stays unknown fails the run (`on_unknown_outcome: fail`), or, given `ask` (the profile
    says "ask"), waits for a person's answer."""
    c = request.call
    for _ in range(MAX_WRITE_SCHEDULES):
        check_cancel()  # a cancel that lands before the stamp: the write never runs
        fence = FenceRequest(
            run_id=request.run_id, call_id=c.call_id, tool=c.name, token=str(workflow.uuid4())
        )
        stamped = await _stamp(fence, patches)
        if stamped.state == FenceState.ALREADY_DONE:
            return  # a reset or a replay reached a finished write: never re-executed
        if stamped.state == FenceState.RUN_NOT_RUNNING:
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.RUN_NOT_RUNNING)
        if stamped.state != FenceState.STAMPED:
            raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.FENCE_REJECTED)
        scheduled = workflow.now()
        write = request.model_copy(update={"fence_token": fence.token})
        try:
            await call(
                WRITE,
                write,
                opt.on_queue(write_call(timeouts), task_queue),
                summary=f"write {c.name}",
            )
            return
        except ActivityError as err:
            workflow.logger.warning("write %s failed: %s", c.call_id, error_type(err))
            failure = err
        verdict = await call(RESOLVE, fence, opt.store_call(), summary=f"resolve {c.name}")
        if verdict.state == FenceState.ALREADY_DONE:
            return
        if verdict.state == FenceState.INTERRUPTED:
            landed_by = _cannot_land_after(timeouts, failure, scheduled)
            answer: str = UNKNOWN
            if reconcile and patches.on(RECONCILE):
                answer = await _reconcile(write, timeouts, landed_by, task_queue)
            if answer == UNKNOWN and ask is not None and patches.on(ASK):
                answer = await ask(write, landed_by)
            if answer == APPLIED:
                return
            if answer == NOT_APPLIED:
                continue  # a fresh fence; the same idempotency key
            raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type=ErrorType.OUTCOME_UNKNOWN)
        # NEVER_CLAIMED: nothing happened; schedule again under a fresh fence.
        await workflow.sleep(timedelta(seconds=1))
    raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.WRITE_NEVER_STARTED)


def _cannot_land_after(timeouts: Timeouts, failure: ActivityError, scheduled: datetime) -> datetime:
    """When the interrupted attempt can no longer land: now if it is known over (it
    reported its own failure: its code returned; or it timed out start-to-close);
    otherwise (a heartbeat timeout: its worker went silent, and may only have lost its
    connection) once its start-to-close bound has passed. It started no later than now,
    and no later than its schedule-to-start bound, so its bound ends by the earlier of the
    two plus start-to-close."""
    if _attempt_over(failure):
        return workflow.now()
    latest_start = min(
        workflow.now(), scheduled + timedelta(seconds=timeouts.schedule_to_start_seconds)
    )
    return latest_start + timedelta(seconds=timeouts.write_seconds)


async def _reconcile(
    write: ToolCallRequest, timeouts: Timeouts, landed_by: datetime, task_queue: str | None
) -> str:
    """Ask the write's probe what became of the interrupted attempt: a Verdict. "Not
    applied" is only true once that attempt can no longer land, so the probe runs only
    after `landed_by`, on a durable timer."""
    wait = landed_by - workflow.now()
    if wait > timedelta(0):
        await workflow.sleep(wait, summary=f"until write {write.call.name} cannot land")
    try:
        answer = await call(
            PROBE,
            write,
            opt.on_queue(opt.tool_call(timeouts), task_queue),
            summary=f"reconcile {write.call.name}",
            outage_seconds=timeouts.store_outage_seconds,
        )
    except ActivityError as err:  # the probe kept failing: the outcome stays unknown
        workflow.logger.warning("reconcile %s failed: %s", write.call.call_id, error_type(err))
        return "unknown"
    return answer.verdict


def _attempt_over(failure: ActivityError) -> bool:
    cause = failure_of(failure)
    if isinstance(cause, ApplicationError):
        return True  # raised by the attempt's own code: it has returned
    return isinstance(cause, ActivityTimeout) and cause.type == TimeoutType.START_TO_CLOSE


async def _stamp(fence: FenceRequest, patches: Patches) -> FenceResult:
    """At most once does not rest on this step's place in history: the stamp refuses a call
    whose step is recorded (the ledger check) and only its own token can claim the fence.
    A local stamp that runs again (its worker died before the task completed, or a reset
    re-ran the task) is answered from the database like any other."""
    summary = f"fence {fence.tool}"
    if patches.on(LOCAL_STAMP):
        return await call_local(STAMP, fence, opt.local_store_call(), summary=summary)
    return await call(STAMP, fence, opt.store_call(), summary=summary)
