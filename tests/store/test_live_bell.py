"""The in-process wake of live followers (store/live/bell.py): a publish of this process
reaches a follower of the same run at once, not at its next poll, on the real database."""

import asyncio
import threading
import time
import uuid
from contextlib import aclosing

from agentrt.contracts.live import LiveDelta
from agentrt.starter.live import follow_store
from agentrt.store.live.bell import Bell
from agentrt.store.live.table import LiveStore, Piece
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.store.test_store import _begin

POLL = 30.0  # a follower that waited for its poll would miss every bound below


async def _deltas(runs: RunStore, live: LiveStore, run_id: str, out: asyncio.Queue[str]) -> None:
    async with aclosing(follow_store(runs, live, run_id, poll_seconds=POLL)) as items:
        async for item in items:
            if isinstance(item, LiveDelta):
                await out.put(item.text)


async def test_a_publish_wakes_a_follower_in_this_process_at_once(
    parts: WorkerResources,
) -> None:
    run_id = _begin(parts)
    runs, live = RunStore(parts.ctx), LiveStore(parts.ctx)
    seq = max(e.sequence for e in runs.events(run_id, -1)) + 1
    got: asyncio.Queue[str] = asyncio.Queue()
    follower = asyncio.create_task(_deltas(runs, live, run_id, got))
    try:
        for offset, text in ((0, "Hello"), (5, " there")):
            await asyncio.sleep(0.3)  # the follower is idle, waiting for its poll
            began = time.monotonic()
            # As the model activity publishes: from a worker thread.
            await asyncio.to_thread(live.publish, run_id, [Piece(seq, 1, "delta", offset, text)])
            assert await asyncio.wait_for(got.get(), 5.0) == text
            assert time.monotonic() - began < POLL / 3  # woken, not at its poll
    finally:
        follower.cancel()


async def test_a_ring_from_another_thread_wakes_only_that_run_and_leaves_nothing_behind() -> None:
    bell = Bell()
    run_id, other = str(uuid.uuid4()), str(uuid.uuid4())
    with bell.subscribe(run_id) as mine, bell.subscribe(other) as theirs:
        mine.clear()
        threading.Thread(target=bell.ring, args=(run_id,)).start()
        assert await mine.wait(5.0)
        assert not await theirs.wait(0.05)
        mine.clear()  # cleared, it waits again until the next ring or its bound
        assert not await mine.wait(0.05)
    assert not bell._waiting  # the blocks' ends unsubscribed them
    bell.ring(run_id)  # no one waits: nothing happens
