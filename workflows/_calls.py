"""One typed entry point for scheduling activities with an ActivityConfig preset."""

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar, overload

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


@overload
async def call(
    fn: Callable[[Any, P], Awaitable[R]],
    arg: P,
    config: ActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> R: ...


@overload
async def call(  # a sync activity (it runs on the worker's activity executor)
    fn: Callable[[Any, P], R],
    arg: P,
    config: ActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> R: ...


async def call(
    fn: Callable[[Any, P], Any],
    arg: P,
    config: ActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> Any:
    """execute_activity_method with a preset; the summary labels it in Temporal Web.

    - An activity cancelled because the run is being cancelled surfaces as CancelledError,
      so no caller mistakes a cancel for the activity's own failure.
    - An activity that failed only because the store is away (StoreUnavailable) is
      scheduled again, durably and with backoff, for up to `outage_seconds`.
    - With `fails_as`, any other failure (retries exhausted, timed out on every attempt)
      becomes a `Stop` with that reason, so the run is settled rather than abandoned; a
      store that stayed away past the window stops it as `store_unavailable`.
    """
    return await _scheduled(
        lambda: workflow.execute_activity_method(  # type: ignore[call-overload]
            fn, arg, summary=summary, **config
        ),
        summary,
        fails_as,
        outage_seconds,
    )


@overload
async def call_local(
    fn: Callable[[Any, P], Awaitable[R]],
    arg: P,
    config: LocalActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> R: ...


@overload
async def call_local(  # a sync activity (it runs on the worker's activity executor)
    fn: Callable[[Any, P], R],
    arg: P,
    config: LocalActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> R: ...


async def call_local(
    fn: Callable[[Any, P], Any],
    arg: P,
    config: LocalActivityConfig,
    *,
    summary: str,
    fails_as: TerminationReason | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> Any:
    """`call`, as a local activity: a short store step that runs on this worker inside the
    workflow task that needs it, so it adds no activity task and no workflow task. Only
    for idempotent steps: a local activity whose marker never reached history (the worker
    died in that task) runs again."""

    async def once() -> Any:
        try:
            return await workflow.execute_local_activity_method(  # type: ignore[call-overload]
                fn, arg, summary=summary, **config
            )
        except FailureError as exc:
            if isinstance(exc, ActivityError):
                raise
            # A local activity's failure arrives bare (the activity's own ApplicationError,
            # TimeoutError or CancelledError); every caller handles an activity's failure.
            raise ActivityError(
                "Local activity failed",
                scheduled_event_id=0,
                started_event_id=0,
                identity="",
                activity_type=getattr(fn, "__name__", ""),
                activity_id="",
                retry_state=None,
            ) from exc

    return await _scheduled(once, summary, fails_as, outage_seconds)


async def store_step(
    local: bool,
    fn: Callable[[Any, P], Awaitable[R]],
    arg: P,
    remote: ActivityConfig,
    local_config: LocalActivityConfig,
    *,
    summary: str,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> R:
    """Begin or complete: a local activity on a run that has the local-store-steps patch,
    a scheduled one on a run recorded before it (so its history replays)."""
    if local:
        return await call_local(
            fn, arg, local_config, summary=summary, outage_seconds=outage_seconds
        )
    return await call(fn, arg, remote, summary=summary, outage_seconds=outage_seconds)


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
        except ActivityError as err:
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


def _detail(err: ActivityError, kind: str) -> str | None:
    cause = err.cause
    return cause.message if isinstance(cause, ApplicationError) and kind in _DETAILED else None


def error_type(err: ActivityError) -> str:
    cause = err.cause
    return (
        cause.type or "ApplicationError"
        if isinstance(cause, ApplicationError)
        else type(cause).__name__
    )
