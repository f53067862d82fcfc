"""The store pool's direct hand-back (activities/_loop_pool.py): results, errors and the
caller's context come back as run_in_executor would give them, a call cancelled while it
queued never runs, a shutdown cancels what is queued, and no more threads than its bound."""

import asyncio
import contextvars
import threading
from concurrent.futures import Future

import pytest
from temporalio.exceptions import ApplicationError

from agentrt.activities._common import blocking_pool, db, offload
from agentrt.activities._loop_pool import LoopPool
from agentrt.contracts.errors import ErrorType
from tests.workflows._waiting import until

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")


class Gate:
    """Calls that hold a pool thread until opened, each saying when a thread took it."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self._taken = threading.Semaphore(0)

    def hold(self) -> bool:
        self._taken.release()
        return self.open.wait()

    async def taken(self, count: int = 1) -> None:
        """Until `count` held calls run on pool threads."""
        for _ in range(count):
            assert await asyncio.to_thread(self._taken.acquire, timeout=30), "never taken"


async def until_cancelled(future: "asyncio.Future[str] | Future[str]") -> None:
    """Until the pool's shutdown has cancelled `future` (it does so from its own thread)."""

    async def cancelled() -> bool:
        return future.cancelled()

    await until(cancelled, "cancelled by the pool's shutdown")


async def test_results_errors_and_the_callers_context_come_back() -> None:
    with LoopPool(2, "lp") as pool:
        where.set("caller")
        names = await asyncio.gather(*(pool.call(lambda: threading.current_thread().name)
                                       for _ in range(6)))  # fmt: skip
        assert {n.rsplit("_", 1)[0] for n in names} == {"lp"} and len(set(names)) <= 2
        assert await pool.call(where.get) == "caller"
        with pytest.raises(ZeroDivisionError):
            await pool.call(lambda: 1 // 0)
        with pytest.raises(RuntimeError):
            await pool.call(lambda: next(iter(())))  # StopIteration, as a future allows it
        assert pool.submit(int, "3").result() == 3  # still an Executor


async def test_offload_and_db_use_it_and_keep_the_store_guard() -> None:
    class OperationalError(Exception):  # the DB-API name of "the database is away"
        pass

    def away() -> None:
        raise OperationalError("host 10.0.0.1 refused")

    with LoopPool(1, "lp") as pool, blocking_pool(pool):
        assert await offload(lambda: threading.current_thread().name) == "lp_0"
        assert await db(int, "7") == 7
        with pytest.raises(ApplicationError) as err:
            await db(away)
        assert err.value.type == ErrorType.STORE_UNAVAILABLE.value
        assert "10.0.0.1" not in str(err.value)


async def test_a_call_cancelled_while_queued_never_runs() -> None:
    ran: list[str] = []
    gate = Gate()
    with LoopPool(1, "lp") as pool:
        blocker = pool.call(gate.hold)
        queued = pool.call(lambda: ran.append("queued"))
        await gate.taken()  # the one thread holds the blocker: `queued` waits in the queue
        queued.cancel()
        gate.open.set()
        assert await blocker is True
        await pool.call(lambda: None)  # the queue has drained past the cancelled call
    assert ran == []


async def test_shutdown_cancels_what_is_queued() -> None:
    gate = Gate()
    pool = LoopPool(1, "lp")
    blocker = pool.call(gate.hold)
    queued = pool.call(lambda: "never")
    await gate.taken()
    stopping = asyncio.get_running_loop().run_in_executor(
        None, lambda: pool.shutdown(wait=True, cancel_futures=True)
    )
    await until_cancelled(queued)  # the shutdown emptied the queue before the gate opens
    gate.open.set()
    await stopping
    assert await blocker is True
    with pytest.raises(asyncio.CancelledError):
        await queued
    with pytest.raises(RuntimeError):
        pool.call(lambda: None)


def test_it_is_built_on_the_public_executor_interface_alone() -> None:
    """Issue 42: no ThreadPoolExecutor internals (its work queue, its shutdown lock, its
    thread count adjuster): an Executor of its own, so a Python release that renames them
    cannot break the worker's store calls."""
    from concurrent.futures import Executor, ThreadPoolExecutor
    from pathlib import Path

    import agentrt.activities._loop_pool as module

    assert issubclass(LoopPool, Executor) and not issubclass(LoopPool, ThreadPoolExecutor)
    source = Path(module.__file__).read_text()
    for internal in ("_work_queue", "_shutdown_lock", "_adjust_thread_count", "_broken"):
        assert internal not in source


async def test_no_more_threads_than_its_bound_and_submit_is_cancelled_by_shutdown() -> None:
    gate = Gate()
    pool = LoopPool(2, "lp")
    busy = [pool.call(gate.hold) for _ in range(4)]
    queued = pool.submit(lambda: "never")
    await gate.taken(2)  # both threads hold a call; the other two and `queued` wait
    assert pool.bound == 2
    assert sum(t.name.startswith("lp_") for t in threading.enumerate()) <= 2
    stopping = asyncio.get_running_loop().run_in_executor(
        None, lambda: pool.shutdown(wait=True, cancel_futures=True)
    )
    await until_cancelled(queued)
    gate.open.set()
    await stopping
    assert [await b for b in busy[:2]] == [True, True]
    assert queued.cancelled()
