"""Shield until done: the one loop that lets a piece of work finish although its caller is
cancelled, used by the workflow (a step that must end, a settle) and by the write activity
(a claimed write must be recorded). Pure asyncio, so workflow code may import it."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def shield_until_done(work: Awaitable[T], on_cancel: Callable[[], None] | None = None) -> T:
    """`work`'s result, awaited through any number of cancellations of the caller (a run's
    cancel, then a worker shutdown: each would otherwise land between two awaits of the
    work). Raises CancelledError only when `work` itself was cancelled. `on_cancel` is told
    of each cancellation that was absorbed."""
    task = asyncio.ensure_future(work)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise
            if on_cancel is not None:
                on_cancel()
