"""Store work runs on the worker's one bounded pool: the async activities' store calls
(activities._common.db: run.begin, the model's turn and completion, the tool's record) go to
the pool the Worker has as its activity executor, sized to max_concurrent_activities, and
never to asyncio's default executor."""

import asyncio
import threading
import uuid

from temporalio.client import Client

from agentrt import AgentRuntime, RunStatus, Settings, build_worker
from agentrt.activities._common import blocking_pool, db, offload
from agentrt.store.runs import RunStore
from agentrt.workers.compose import TOOL_THREAD_PREFIX


async def test_every_store_call_of_a_run_runs_on_the_workers_bounded_pool(
    client: Client, settings: Settings
) -> None:
    seen: list[tuple[str, str]] = []

    def hook(point: str) -> None:  # called inside the store calls, on their thread
        seen.append((point, threading.current_thread().name))

    s = settings.model_copy(
        update={"task_queue": f"tq-{uuid.uuid4().hex[:10]}", "max_concurrent_activities": 3}
    )
    worker, resources = build_worker(client, s, faults=hook)
    with resources:
        assert resources.executor is not None
        assert resources.executor._max_workers == 3  # the worker's limit, not the CPU count
        async with worker:
            done = await AgentRuntime(client, RunStore(resources.ctx), s.task_queue).run(
                "auto", "Please refund order 1042"
            )
    assert done.status is RunStatus.COMPLETED
    points = {p for p, _ in seen}
    # run.begin's, the model's and the completion's store calls (async activities, by db()).
    assert {"begin.before_write", "model.after_record", "complete.before_commit"} <= points
    threads = {t for _, t in seen}
    assert all(t.startswith(TOOL_THREAD_PREFIX) for t in threads), threads
    assert len(threads) <= 3


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
