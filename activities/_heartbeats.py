"""Heartbeats of a running activity: on a timer of its loop (a dead worker is noticed
within the heartbeat timeout), and from a sync tool's thread (its ToolContext's)."""

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from temporalio import activity

from agentrt.activities.ports import no_heartbeat

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def threadsafe_heartbeat() -> Callable[..., None]:
    """activity.heartbeat, callable from a sync tool's thread: the SDK's async-activity
    heartbeat schedules a task, so another thread hands it to the activity's loop."""
    if not activity.in_activity():
        return no_heartbeat
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()

    def beat(*details: Any) -> None:
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        with contextlib.suppress(RuntimeError):  # the activity (or its loop) is gone
            if on_loop:
                activity.heartbeat(*details)
            else:
                loop.call_soon_threadsafe(_beat_in, context, details)

    return beat


def _beat_in(context: contextvars.Context, details: tuple[Any, ...]) -> None:
    with contextlib.suppress(RuntimeError):
        context.run(activity.heartbeat, *details)


class _Beats:
    """Heartbeats on a timer of the activity's loop until `stop()`.

    The first beat comes after `every` (or a third of the heartbeat timeout, if shorter),
    not at once: the server counts the heartbeat timeout from the activity's start, so a
    dead worker is noticed just as fast, and an activity shorter than that (most store
    steps and model calls) costs no heartbeat round trip to the server at all. A timer,
    not a task: most activities end before it fires, and every model and tool call would
    otherwise create and cancel a task. It runs in this activity's context."""

    __slots__ = ("_every", "_loop", "_pending")

    def __init__(self, every: float) -> None:
        timeout = activity.info().heartbeat_timeout
        first = min(every, timeout.total_seconds() / 3) if timeout else every
        self._every = every
        self._loop = asyncio.get_running_loop()
        self._pending = self._loop.call_later(first, self._beat)

    def _beat(self) -> None:
        activity.heartbeat()
        self._pending = self._loop.call_later(self._every, self._beat)

    def stop(self) -> None:
        self._pending.cancel()


@asynccontextmanager
async def heartbeating(every: float = 1.0) -> AsyncIterator[None]:
    """Heartbeat in the background, so a dead worker is noticed within the heartbeat
    timeout (the timing: `_Beats`)."""
    beats = _Beats(every)
    try:
        yield
    finally:
        beats.stop()


def heartbeats(fn: F) -> F:
    """An activity that heartbeats for as long as it runs (under `@activity.defn`): with a
    short heartbeat timeout, a call on a worker that died is retried in seconds. (The
    timer directly, not `heartbeating()`: no async generator per model and tool call.)"""

    @functools.wraps(fn)
    async def beating(*args: Any, **kwargs: Any) -> Any:
        beats = _Beats(1.0)
        try:
            return await fn(*args, **kwargs)
        finally:
            beats.stop()

    return beating  # type: ignore[return-value]
