"""One typed entry point for scheduling activities with an ActivityConfig preset."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from temporalio import workflow
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    FailureError,
    is_cancelled_exception,
)
from temporalio.workflow import ActivityConfig, LocalActivityConfig

from agentrt.workflows._loop import Stop

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.profiles import Timeouts

P = TypeVar("P")
R = TypeVar("R")

DEFAULT_OUTAGE_SECONDS = Timeouts().store_outage_seconds
_FIRST_PAUSE = timedelta(seconds=1)
_MAX_PAUSE = timedelta(seconds=30)


@dataclass(frozen=True)
class ActivityRef(Generic[P, R]):
    """An activity by its frozen name (contracts/ids.py) and result type: how the workflow
    schedules one whose module holds SQL, which workflow code must not import (not even
    through the sandbox's passthrough: "Workflow code reaches no I/O library")."""

    name: str
    result_type: type[R]


Activity = Callable[[Any, P], Awaitable[R]] | ActivityRef[P, R]


# How an activity is scheduled, by its frozen name or by its method: as an activity task, or
# (local) on this worker inside the workflow task that needs it.
_Schedule = Callable[..., Awaitable[Any]]
_SCHEDULERS: dict[bool, tuple[_Schedule, _Schedule]] = {
    False: (workflow.execute_activity, workflow.execute_activity_method),
    True: (workflow.execute_local_activity, workflow.execute_local_activity_method),
}


async def call(
    fn: Activity[P, R],
    arg: P,
    config: ActivityConfig | LocalActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
    local: bool = False,
) -> R:
    """execute_activity_method with a preset; the summary labels it in Temporal Web.

    - An activity cancelled because the run is being cancelled surfaces as CancelledError,
      so no caller mistakes a cancel for the activity's own failure.
    - An activity that failed only because the store is away (StoreUnavailable) is
      scheduled again, durably and with backoff, for up to `outage_seconds`.
    - With `fails_as`, any other failure (retries exhausted, timed out on every attempt)
      becomes a `Stop` with that reason, so the run is settled rather than abandoned; a
      store that stayed away past the window stops it as `store_unavailable`.
    - `local`: as a local activity (`call_local`), with a LocalActivityConfig.
    """
    by_name, by_method = _SCHEDULERS[local]

    def schedule() -> Awaitable[R]:
        if isinstance(fn, ActivityRef):
            return by_name(fn.name, arg, result_type=fn.result_type, summary=summary, **config)
        return by_method(fn, arg, summary=summary, **config)

    return await _scheduled(schedule, summary, fails_as, outage_seconds)


def call_local(
    fn: Activity[P, R], arg: P, config: LocalActivityConfig, summary: str
) -> Awaitable[R]:
    """`call`, as a local activity: a short store step that runs on this worker inside the
    workflow task that needs it, so it adds no activity task and no workflow task. Only
    for idempotent steps: a local activity whose marker never reached history (the worker
    died in that task) runs again.

    Its failure arrives bare (SDK 1.35.0 raises the local activity's own ApplicationError,
    TimeoutError or CancelledError, with no ActivityError around it, and offers no public
    way to make one): callers catch FailureError, and `failure_of` reads either shape."""
    return call(fn, arg, config, summary=summary, local=True)


async def _scheduled(
    schedule: Callable[[], Awaitable[R]],
    summary: str,
    fails_as: TerminationReason | None,
    outage_seconds: float,
) -> R:
    first_seen = None
    pause = _FIRST_PAUSE
    while True:
        try:
            return await schedule()
        except FailureError as err:
            if is_cancelled_exception(err):
                raise asyncio.CancelledError() from err
            kind = error_type(err)
            if kind == ErrorType.STORE_UNAVAILABLE:
                now = workflow.now()
                first_seen = first_seen or now
                if now - first_seen < timedelta(seconds=outage_seconds):
                    workflow.logger.warning("%s: store unavailable, again in %s", summary, pause)
                    await workflow.sleep(pause, summary="store unavailable")
                    pause = min(pause * 2, _MAX_PAUSE)
                    continue
                if fails_as is not None:
                    raise Stop(TerminationReason.STORE_UNAVAILABLE, error_type=kind) from None
            if fails_as is not None:
                raise Stop(fails_as, error_type=kind, detail=_detail(err, kind)) from None
            raise


# Messages our providers build for the operator (status, code, a redacted excerpt of the
# provider's reason); other failures' messages may quote content and stay out.
_DETAILED = frozenset({ErrorType.PROVIDER_REJECTED.value, ErrorType.PROVIDER_UNAVAILABLE.value})


def _detail(err: FailureError, kind: str) -> str | None:
    cause = failure_of(err)
    return cause.message if isinstance(cause, ApplicationError) and kind in _DETAILED else None


def failure_of(err: FailureError) -> BaseException | None:
    """What the step raised: a scheduled activity's ActivityError carries it as its cause, a
    local activity's failure is it (see call_local)."""
    return err.cause if isinstance(err, ActivityError) else err


def error_type(err: FailureError) -> str:
    cause = failure_of(err)
    return (
        cause.type or "ApplicationError"
        if isinstance(cause, ApplicationError)
        else type(cause).__name__
    )
