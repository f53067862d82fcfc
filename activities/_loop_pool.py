"""A thread pool whose calls hand their result straight back to the awaiting event loop.

`loop.run_in_executor` wraps every call in a concurrent Future (a lock and a condition of
its own), chains it to an asyncio Future and copies the outcome across: about half of a
store call's cost on the event loop (bench/HISTORY.md set 10), and an agent run makes about
fifteen store calls. Here a work item carries the asyncio Future itself and the pool thread
settles it with one `call_soon_threadsafe`: the worker's CPU per run against the storeless
loop is 1.27x with it, 1.35x with a ThreadPoolExecutor (bench/HISTORY.md set 19).

Built on the public `Executor` interface and a queue of its own (no ThreadPoolExecutor
internals): threads start as calls need them, up to the bound, and `submit` still works.
One of the fast paths (workers/fastpath.py): with them off the worker's store pool is a plain
ThreadPoolExecutor."""

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, Generic, ParamSpec, Protocol, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


class _Item(Protocol):
    def run(self) -> None: ...

    def cancel(self) -> None: ...


class LoopPool(Executor):
    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        self._bound = max(1, max_workers)
        self._prefix = thread_name_prefix
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Semaphore(0)  # threads waiting for an item
        self._lock = threading.Lock()
        self._closed = False

    @property
    def bound(self) -> int:
        """The most threads it runs."""
        return self._bound

    def call(self, fn: Callable[[], T]) -> "asyncio.Future[T]":
        """`fn()` on a pool thread, in the caller's context; awaited on the caller's loop.
        A call cancelled before a thread takes it never runs, as with run_in_executor."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._put(_LoopCall(loop, future, contextvars.copy_context(), fn))
        return future

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> "Future[T]":
        future: Future[T] = Future()
        self._put(_Submitted(future, lambda: fn(*args, **kwargs)))
        return future

    def _put(self, item: _Item) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._queue.put(item)
            # An idle thread takes it; else one more thread, up to the bound.
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._bound:
                name = f"{self._prefix}_{len(self._threads)}"
                thread = threading.Thread(target=self._work, name=name, daemon=True)
                self._threads.append(thread)
                thread.start()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            item.run()
            self._idle.release()
        self._queue.put(None)  # the next thread stops too

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if cancel_futures:
            with contextlib.suppress(queue.Empty):
                while (item := self._queue.get_nowait()) is not None:
                    item.cancel()
        self._queue.put(None)
        if wait:
            for thread in threads:
                thread.join()


class _LoopCall(Generic[T]):
    """A call awaited on an event loop: its outcome is set on the loop's own future."""

    __slots__ = ("_context", "_fn", "_future", "_loop")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        future: "asyncio.Future[T]",
        context: contextvars.Context,
        fn: Callable[[], T],
    ) -> None:
        self._loop, self._future, self._context, self._fn = loop, future, context, fn

    def cancel(self) -> None:
        """From the pool's shutdown, on another thread: the loop cancels its own future."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits it
            self._loop.call_soon_threadsafe(self._future.cancel)

    def run(self) -> None:
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


class _Submitted(Generic[T]):
    """A `submit`: a concurrent Future, as any Executor gives."""

    __slots__ = ("_fn", "_future")

    def __init__(self, future: "Future[T]", fn: Callable[[], T]) -> None:
        self._future, self._fn = future, fn

    def cancel(self) -> None:
        self._future.cancel()

    def run(self) -> None:
        if not self._future.set_running_or_notify_cancel():
            return
        try:
            self._future.set_result(self._fn())
        except BaseException as exc:
            self._future.set_exception(exc)


def _result(future: "asyncio.Future[Any]", value: Any) -> None:
    if not future.cancelled():
        future.set_result(value)


def _exception(future: "asyncio.Future[Any]", exc: BaseException) -> None:
    if not future.cancelled():
        # A future refuses StopIteration; run_in_executor's chaining hits the same refusal.
        refused = isinstance(exc, StopIteration)
        future.set_exception(RuntimeError("StopIteration") if refused else exc)
