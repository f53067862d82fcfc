"""One typed entry point for scheduling activities with an ActivityConfig preset."""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ActivityConfig

P = TypeVar("P")
R = TypeVar("R")


async def call(
    fn: Callable[[Any, P], Awaitable[R]], arg: P, config: ActivityConfig, *, summary: str
) -> R:
    """execute_activity_method with a preset; the summary labels it in Temporal Web."""
    return await workflow.execute_activity_method(  # type: ignore[call-overload,no-any-return]
        fn, arg, summary=summary, **config
    )


def error_type(err: ActivityError) -> str:
    cause = err.cause
    return (
        cause.type or "ApplicationError"
        if isinstance(cause, ApplicationError)
        else type(cause).__name__
    )
