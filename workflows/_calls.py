"""One typed entry point for scheduling activities with an ActivityConfig preset."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.workflow import ActivityConfig

P = TypeVar("P")
R = TypeVar("R")


async def call(
    fn: Callable[[Any, P], Awaitable[R]], arg: P, config: ActivityConfig, *, summary: str
) -> R:
    """execute_activity_method with a preset; the summary labels it in Temporal Web.

    An activity cancelled because the run is being cancelled surfaces as CancelledError,
    so no caller mistakes a cancel for the activity's own failure.
    """
    try:
        return await workflow.execute_activity_method(  # type: ignore[call-overload,no-any-return]
            fn, arg, summary=summary, **config
        )
    except ActivityError as err:
        if is_cancelled_exception(err):
            raise asyncio.CancelledError() from err
        raise


def error_type(err: ActivityError) -> str:
    cause = err.cause
    return (
        cause.type or "ApplicationError"
        if isinstance(cause, ApplicationError)
        else type(cause).__name__
    )
