"""A thread pool whose calls hand their result straight back to the awaiting event loop.

`loop.run_in_executor` wraps every call in a concurrent Future (a lock and a condition of
its own), chains it to an asyncio Future and copies the outcome across: about half of a
store call's cost on the event loop, measured (bench/HISTORY.md set 10), and an agent run
makes about fifteen store calls. Here the work item carries the asyncio Future itself and
the pool thread settles it with one `call_soon_threadsafe`. Everything else is the
ThreadPoolExecutor's (its threads, its bound, its shutdown), so `submit` still works."""

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class LoopPool(ThreadPoolExecutor):
    def call(self, fn: Callable[[], T]) -> "asyncio.Future[T]":
        """`fn()` on a pool thread, in the caller's context; awaited on the caller's loop.
        A call cancelled before a thread takes it never runs, as with run_in_executor."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        item = _LoopCall(loop, future, contextvars.copy_context(), fn)
        with self._shutdown_lock:
            if self._broken or self._shutdown:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._work_queue.put(item)  # type: ignore[arg-type]  # run(), future.cancel(): all it uses
            self._adjust_thread_count()
        return future


class _LoopCall(Generic[T]):
    """A work item the ThreadPoolExecutor's threads run (`run()`); its shutdown with
    cancel_futures cancels what is still queued (`future.cancel()`), hence `future`."""

    __slots__ = ("_context", "_fn", "_future", "_loop")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        future: "asyncio.Future[T]",
        context: contextvars.Context,
        fn: Callable[[], T],
    ) -> None:
        self._loop, self._future, self._context, self._fn = loop, future, context, fn

    @property
    def future(self) -> "_LoopCall[T]":
        return self

    def cancel(self) -> None:
        """From the pool's shutdown, on another thread: the loop cancels its own future."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits it
            self._loop.call_soon_threadsafe(self._future.cancel)

    def run(self, *_worker_context: object) -> None:  # Python 3.14's threads pass a context
        if self._future.cancelled():  # its awaiter was cancelled while it queued
            return
        settle: Callable[..., Any]
        try:
            outcome: Any = self._context.run(self._fn)
            settle = _result
        except BaseException as exc:  # as the executor does: the awaiter gets it
            outcome, settle = exc, _exception
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits it
            self._loop.call_soon_threadsafe(settle, self._future, outcome)


def _result(future: "asyncio.Future[Any]", value: Any) -> None:
    if not future.cancelled():
        future.set_result(value)


def _exception(future: "asyncio.Future[Any]", exc: BaseException) -> None:
    if not future.cancelled():
        # A future refuses StopIteration; run_in_executor's chaining hits the same refusal.
        refused = isinstance(exc, StopIteration)
        future.set_exception(RuntimeError("StopIteration") if refused else exc)
