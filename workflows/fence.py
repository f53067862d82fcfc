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
from agentrt.workflows.fence_bounds import FENCE_BOUNDS, Schedules
from agentrt.workflows.patches import Patches

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.profiles import Timeouts
    from agentrt.contracts.reconcile import APPLIED, NOT_APPLIED, UNKNOWN, Verdict
    from agentrt.contracts.run import (
        FenceRequest,
        FenceResult,
        FenceState,
        ToolAsked,
        ToolCallRequest,
        ToolCallResult,
        ToolReply,
    )

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
# A write that waits for the operator (a remote agent's input-required): asked only when a
# write's result asks, which no run recorded before it met (workflows/tool_input.py).
TOOL_INPUT = "write-asks-input"

# A tool's own attempt bound (ToolPlan.attempt_seconds): its write's start-to-close is the
# bound and this headroom (the claim, the record and the record's retries, about 6 s).
WRITE_HEADROOM_SECONDS = 10.0
# The worker cuts a bounded tool's call at its bound, counted from the attempt's start as
# the worker saw it: a moment after the start Temporal records. This covers that moment.
LANDING_MARGIN_SECONDS = 2.0

INTERRUPTED = TerminationReason.INTERRUPTED_WRITE

# Waits for a person's answer on an interrupted write (workflows/reconciliation.py), given
# the request and when its attempt can no longer land.
Ask = Callable[[ToolCallRequest, datetime], Awaitable[Verdict]]
# Waits for the operator's answer to a write's question and records it (the input pause).
Answer = Callable[[ToolCallRequest, ToolAsked], Awaitable[ToolReply]]


def write_call(t: Timeouts, attempt_seconds: float | None = None) -> ActivityConfig:
    """A non-idempotent write: one attempt, and a cancel waits for it to finish. A tool's
    own attempt bound, if it declares one, sets the attempt's time bound in place of the
    profile's `write_seconds`."""
    seconds = t.write_seconds if attempt_seconds is None else attempt_seconds
    if attempt_seconds is not None:
        seconds += WRITE_HEADROOM_SECONDS
    return {
        "start_to_close_timeout": timedelta(seconds=seconds),
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
    answer_input: Answer | None = None,
    patches: Patches,
    attempt_seconds: float | None = None,
) -> None:
    """`reconcile`: the tool has a probe (the run plan says so). A write whose outcome
    stays unknown fails the run (`on_unknown_outcome: fail`), or, given `ask` (the profile
    says "ask"), waits for a person's answer. `answer_input`: waits for the operator's answer
    when the write asks a question; the answer is sent by the same write (its same
    idempotency key, a fresh fence). `attempt_seconds`: the tool's own bound on an
    attempt (the plan's), in place of the profile's `write_seconds`."""
    c = request.call
    bound = _Bound(timeouts, attempt_seconds)
    schedules = Schedules()
    while True:
        check_cancel()  # a cancel that lands before the stamp: the write never runs
        fence = await _claim(request, patches, schedules)
        if fence is None:
            return  # a reset or a replay reached a finished write: never re-executed
        scheduled = workflow.now()
        update = {"fence_token": fence.token, "attempt_seconds": attempt_seconds}
        write = request.model_copy(update=update)
        done, failure = await _write(write, timeouts, attempt_seconds, task_queue)
        if done is not None and done.asked is not None and workflow.patched(TOOL_INPUT):
            request = await _answered(request, write, done.asked, answer_input)
            continue
        if failure is None:
            return
        verdict = await call(RESOLVE, fence, opt.store_call(), summary=f"resolve {c.name}")
        if verdict.state == FenceState.ALREADY_DONE:
            return
        if verdict.state == FenceState.INTERRUPTED:
            landed_by = bound.cannot_land_after(failure, scheduled)
            answer: str = UNKNOWN
            if reconcile and patches.on(RECONCILE):
                answer = await _reconcile(write, timeouts, landed_by, task_queue)
            if answer == UNKNOWN and ask is not None and patches.on(ASK):
                answer = await ask(write, landed_by)
            if answer == APPLIED:
                return
            if answer != NOT_APPLIED:
                raise Stop(INTERRUPTED, error_type=ErrorType.OUTCOME_UNKNOWN)
            schedules.not_applied += 1  # runs again: a fresh fence, the same idempotency key
        else:
            # NEVER_CLAIMED: nothing happened; schedule again under a fresh fence.
            schedules.unclaimed += 1
            await workflow.sleep(timedelta(seconds=1))
        _check_bounds(schedules)


async def _answered(
    request: ToolCallRequest, write: ToolCallRequest, asked: ToolAsked, answer: Answer | None
) -> ToolCallRequest:
    """The target waits for the operator (the write emptied its fence, recorded nothing):
    the run pauses for input; the request of the call's next turn, carrying the answer,
    to be stamped afresh under the same idempotency key."""
    if answer is None:
        raise Stop(TerminationReason.TOOL_FAILED, error_type=ErrorType.NOT_AWAITING_INPUT)
    reply = await answer(write, asked)
    return request.model_copy(update={"reply": reply})


async def _claim(
    request: ToolCallRequest, patches: Patches, schedules: Schedules
) -> FenceRequest | None:
    """Stamp a fresh fence for the next attempt of the write: the fence, or None when the
    write already finished. Stops the run when the fence cannot be stamped."""
    c = request.call
    fence = FenceRequest(
        run_id=request.run_id, call_id=c.call_id, tool=c.name, token=str(workflow.uuid4())
    )
    stamped = await _stamp(fence, patches)
    schedules.scheduled += 1
    if stamped.state == FenceState.ALREADY_DONE:
        return None
    if stamped.state == FenceState.RUN_NOT_RUNNING:
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.RUN_NOT_RUNNING)
    if stamped.state != FenceState.STAMPED:
        raise Stop(INTERRUPTED, error_type=ErrorType.FENCE_REJECTED)
    return fence


async def _write(
    write: ToolCallRequest,
    timeouts: Timeouts,
    attempt_seconds: float | None,
    task_queue: str | None,
) -> tuple[ToolCallResult | None, ActivityError | None]:
    """Schedule the stamped write once: its result when it finished, else how it failed."""
    c = write.call
    try:
        done = await call(
            WRITE,
            write,
            opt.on_queue(write_call(timeouts, attempt_seconds), task_queue),
            summary=f"write {c.name}" if write.reply is None else f"write {c.name}: answer",
        )
        return done, None
    except ActivityError as err:
        workflow.logger.warning("write %s failed: %s", c.call_id, error_type(err))
        return None, err


def _check_bounds(schedules: Schedules) -> None:
    """Raise the Stop that ends the write's schedules, if a bound is reached. Where the
    separate bounds and the combined one of earlier builds agree, no patch is asked
    (workflows/fence_bounds.py)."""
    separate = schedules.stop()
    if schedules.parting() and not workflow.patched(FENCE_BOUNDS):
        if schedules.stop_before():  # a run of an earlier build, replayed: its old end
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.WRITE_NEVER_STARTED)
        return
    if separate is not None:
        raise Stop(TerminationReason.TOOL_FAILED, error_type=separate)


class _Bound:
    """When an interrupted attempt can no longer land: by the tool's own attempt bound if
    it declares one (the worker cuts its call there), else the profile's `write_seconds`
    (what every run recorded before tool bounds waited: unchanged)."""

    def __init__(self, timeouts: Timeouts, attempt_seconds: float | None) -> None:
        self._timeouts = timeouts
        self._bounded = attempt_seconds is not None
        self._lands_within = (
            timedelta(seconds=timeouts.write_seconds)
            if attempt_seconds is None
            else timedelta(seconds=attempt_seconds + LANDING_MARGIN_SECONDS)
        )

    def cannot_land_after(self, failure: ActivityError, scheduled: datetime) -> datetime:
        """Now if the attempt is known over (it reported its own failure: its code
        returned; or it timed out start-to-close); otherwise (a heartbeat timeout: its
        worker went silent, and may only have lost its connection) once its bound has
        passed. It started no later than now, and no later than its schedule-to-start
        bound, so its bound ends by the earlier of the two plus the bound. A bounded
        tool's attempt that timed out on its heartbeat started no later than one heartbeat
        timeout before now, too (the server times it out a heartbeat timeout after its
        start or its last heartbeat, whichever is later)."""
        if _attempt_over(failure):
            return workflow.now()
        latest_start = min(
            workflow.now(),
            scheduled + timedelta(seconds=self._timeouts.schedule_to_start_seconds),
        )
        if self._bounded and _timed_out(failure, TimeoutType.HEARTBEAT):
            silent = timedelta(seconds=self._timeouts.write_heartbeat_seconds)
            latest_start = min(latest_start, workflow.now() - silent)
        return latest_start + self._lands_within


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
    if isinstance(failure_of(failure), ApplicationError):
        return True  # raised by the attempt's own code: it has returned
    return _timed_out(failure, TimeoutType.START_TO_CLOSE)


def _timed_out(failure: ActivityError, how: TimeoutType) -> bool:
    cause = failure_of(failure)
    return isinstance(cause, ActivityTimeout) and cause.type == how


async def _stamp(fence: FenceRequest, patches: Patches) -> FenceResult:
    """At most once does not rest on this step's place in history: the stamp refuses a call
    whose step is recorded (the ledger check) and only its own token can claim the fence.
    A local stamp that runs again (its worker died before the task completed, or a reset
    re-ran the task) is answered from the database like any other."""
    summary = f"fence {fence.tool}"
    if patches.on(LOCAL_STAMP):
        return await call_local(STAMP, fence, opt.local_store_call(), summary=summary)
    return await call(STAMP, fence, opt.store_call(), summary=summary)
