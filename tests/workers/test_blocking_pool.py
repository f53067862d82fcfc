"""Store work runs on bounded pools: the async activities' store calls (activities._common.db:
run.begin, the model's turn and completion, the tool's record) go to the worker's store
pool, no larger than the worker's activity limit nor the store's pooled connections; the
sync activities' to the activity executor; never to asyncio's default executor."""

import asyncio
import threading
import uuid

from temporalio.client import Client

from agentrt import AgentRuntime, RunStatus, Settings, build_worker
from agentrt.activities._common import blocking_pool, db, offload
from agentrt.activities._loop_pool import LoopPool
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import STORE_THREAD_PREFIX, TOOL_THREAD_PREFIX
from agentrt.workers.resources import pooled_connections


async def test_every_store_call_of_a_run_runs_on_the_workers_bounded_pool(
    client: Client, settings: Settings
) -> None:
    seen: list[tuple[str, str]] = []

    def hook(point: str) -> None:  # called inside the store calls, on their thread
        seen.append((point, threading.current_thread().name))

    s = settings.replace(
        temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
        worker={"max_concurrent_activities": 3},
    )
    worker, resources = build_worker(client, s, faults=hook)
    with resources:
        assert resources.executor is not None and resources.store_executor is not None
        assert resources.executor._max_workers == 3  # the worker's limit, not the CPU count
        bound = min(3, pooled_connections(resources.engine))
        assert isinstance(resources.store_executor, LoopPool)  # the fast paths are on
        assert resources.store_executor.bound == bound
        async with worker:
            done = await AgentRuntime(client, RunStore(resources.ctx), s.temporal.task_queue).run(
                "auto", "Please refund order 1042"
            )
    assert done.status is RunStatus.COMPLETED
    on = dict(seen)
    # run.begin's, the model's and the completion's store calls (async activities, by db()).
    for point in ("begin.before_write", "model.after_record", "complete.before_commit"):
        assert on[point].startswith(STORE_THREAD_PREFIX), (point, on[point])
    threads = {t for _, t in seen}
    # The sync activities' (the fence's stamp) on the activity executor; nothing elsewhere.
    assert all(t.startswith((STORE_THREAD_PREFIX, TOOL_THREAD_PREFIX)) for t in threads), threads
    assert len({t for t in threads if t.startswith(STORE_THREAD_PREFIX)}) <= bound


async def test_offload_runs_on_the_pool_it_is_given_and_keeps_the_context() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, "bounded") as pool:
        with blocking_pool(pool):
            names = await asyncio.gather(
                *(offload(lambda: threading.current_thread().name) for _ in range(5))
            )
            assert await db(int, "7") == 7
        assert set(names) == {"bounded_0"}  # one thread: five calls queued on it
        outside = await offload(lambda: threading.current_thread().name)
        assert not outside.startswith("bounded")  # no pool set: not this one
