"""Helpers shared by the activity classes."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.errors import ErrorType

if TYPE_CHECKING:
    from activities.ports import RunPort

P = ParamSpec("P")
T = TypeVar("T")


async def db(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking store call off the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def fatal(message: str, kind: ErrorType) -> ApplicationError:
    return ApplicationError(message, type=kind.value, non_retryable=True)


@asynccontextmanager
async def heartbeating(every: float = 1.0) -> AsyncIterator[None]:
    """Heartbeat in the background, so a dead worker is noticed within the heartbeat timeout."""

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()


async def privacy_of(runs: "RunPort", run_id: str) -> str:
    """The run's event privacy level, from the plan recorded at begin; `metadata` (the
    strict default) when the run cannot be read."""
    try:
        snap = await db(runs.snapshot, run_id)
    except Exception:
        return "metadata"
    return str(snap.get("plan", {}).get("privacy", "metadata"))
