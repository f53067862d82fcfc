"""Followers of one run share one poll of the store (api/operator/feeds.py), on the real
database: one poller task per run however many follow it, every follower receives every
event once and in order (a slow one too, reading the store past the buffer), and the
poller stops when the last follower leaves."""

import asyncio
import uuid
from typing import Any

import pytest
from sqlalchemy import update

from agentrt.api.operator import feeds as feeds_module
from agentrt.api.operator.feeds import Feeds, changed
from agentrt.api.wake import Waker
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.messages import Message
from agentrt.contracts.run import TurnRecord
from agentrt.contracts.views import EventView
from agentrt.store.db.tables import RunRow
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._runs import new_run
from tests._snapshots import recorded

SNAPSHOT = recorded("full")
FOLLOWERS = 40


class CountingRuns(RunStore):
    """The real store, counting the reads a follow makes of it."""

    reads = 0

    def events(self, *args: Any, **kwargs: Any) -> list[EventView]:
        self.reads += 1
        return super().events(*args, **kwargs)

    def status(self, run_id: str) -> RunStatus | None:
        self.reads += 1
        return super().status(run_id)


def _begun(runs: RunStore) -> str:
    run_id = str(uuid.uuid4())
    assert runs.begin(new_run(run_id, snapshot=SNAPSHOT))
    return run_id


def _turn(runs: RunStore, run_id: str, seq: int) -> None:
    message = Message(role="assistant", content=f"turn {seq}")
    runs.record_turn(run_id, TurnRecord(seq, 1, message, {"content": "x"}, 1.0, "full"))


def _settle(runs: RunStore, run_id: str) -> None:
    with runs.ctx.transaction() as c:
        c.execute(
            update(RunRow).where(RunRow.id == run_id).values(status=RunStatus.COMPLETED.value)
        )


async def _follow(
    feeds: Feeds, run_id: str, seen: list[int], hold: asyncio.Event | None = None, after: int = -1
) -> RunStatus | None:
    """What sse.follow does with a feed: take after its own offset until the end."""
    last = after
    async with feeds.join(run_id) as feed:
        if hold is not None:
            await hold.wait()  # a slow follower: takes nothing for a while
        while True:
            woken = feed.changed
            batch, ended = await feeds.take(feed, last)
            for e in batch:
                if e.position > last:  # a follower's offset is a position (commit order)
                    seen.append(e.sequence)
                    last = e.position
            if batch:
                continue
            if ended:
                return feed.status
            await changed(woken, 2.0)


def _pollers(run_id: str) -> int:
    return sum(1 for t in asyncio.all_tasks() if t.get_name() == f"feed {run_id}")


async def _wait_until(check: Any, within: float = 10.0) -> None:
    for _ in range(int(within / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not reached")


async def test_followers_of_one_run_share_one_poll(parts: WorkerResources) -> None:
    runs = CountingRuns(parts.ctx)
    run_id = _begun(runs)
    feeds = Feeds(runs, Waker(0.05), LiveStore(parts.ctx).mark)
    seen: list[list[int]] = [[] for _ in range(FOLLOWERS)]
    tasks = [asyncio.create_task(_follow(feeds, run_id, s)) for s in seen]
    await _wait_until(lambda: all(s == [0] for s in seen))
    assert _pollers(run_id) == 1 and feeds.followed() == 1
    for seq in range(1, 6):
        await asyncio.to_thread(_turn, runs, run_id, seq)
        await asyncio.sleep(0.05)
        assert _pollers(run_id) == 1
    await asyncio.to_thread(_settle, runs, run_id)
    ends = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert ends == [RunStatus.COMPLETED] * FOLLOWERS
    assert all(s == [0, 1, 2, 3, 4, 5] for s in seen)  # each event once, in order
    # Every read of the store was the one poller's: none per follower.
    assert feeds.catchups == 0 and runs.reads == feeds.reads
    assert runs.reads < FOLLOWERS, runs.reads
    # The last follower gone, so is the poller.
    assert feeds.followed() == 0
    await _wait_until(lambda: _pollers(run_id) == 0)


async def test_the_poller_stops_when_the_last_follower_disconnects(
    parts: WorkerResources,
) -> None:
    runs = RunStore(parts.ctx)
    run_id = _begun(runs)  # never ends
    feeds = Feeds(runs, Waker(0.05), LiveStore(parts.ctx).mark)
    seen: list[list[int]] = [[], []]
    first, second = (asyncio.create_task(_follow(feeds, run_id, s)) for s in seen)
    await _wait_until(lambda: seen == [[0], [0]])
    first.cancel()  # a client goes away
    await asyncio.gather(first, return_exceptions=True)
    assert feeds.followed() == 1 and _pollers(run_id) == 1  # the other still follows
    await asyncio.to_thread(_turn, runs, run_id, 1)
    await _wait_until(lambda: seen[1] == [0, 1])
    second.cancel()
    await asyncio.gather(second, return_exceptions=True)
    assert feeds.followed() == 0
    await _wait_until(lambda: _pollers(run_id) == 0)


async def test_a_slow_follower_reads_past_the_buffer_and_loses_nothing(
    parts: WorkerResources, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feeds_module, "BUFFER", 3)
    runs = RunStore(parts.ctx)
    run_id = _begun(runs)
    feeds = Feeds(runs, Waker(0.05), LiveStore(parts.ctx).mark)
    fast: list[int] = []
    slow: list[int] = []
    hold = asyncio.Event()
    tasks = [
        asyncio.create_task(_follow(feeds, run_id, fast)),
        asyncio.create_task(_follow(feeds, run_id, slow, hold)),
    ]
    for seq in range(1, 11):
        await asyncio.to_thread(_turn, runs, run_id, seq)
    await _wait_until(lambda: fast == list(range(11)))  # not held back by the slow one
    assert slow == []
    hold.set()
    await asyncio.to_thread(_settle, runs, run_id)
    await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert fast == slow == list(range(11))
    assert feeds.catchups > 0  # the slow one read the store from its own offset


async def test_a_resumed_follower_gets_exactly_what_follows_its_offset(
    parts: WorkerResources, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Last-Event-ID: a follower joining a run's feed at an offset, behind the buffer or
    inside it, receives each event after that offset once and nothing before it."""
    monkeypatch.setattr(feeds_module, "BUFFER", 4)
    runs = RunStore(parts.ctx)
    run_id = _begun(runs)
    for seq in range(1, 10):
        await asyncio.to_thread(_turn, runs, run_id, seq)
    feeds = Feeds(runs, Waker(0.05), LiveStore(parts.ctx).mark)
    early: list[int] = []
    first = asyncio.create_task(_follow(feeds, run_id, early))
    await _wait_until(lambda: early == list(range(10)))
    behind: list[int] = []
    inside: list[int] = []
    tasks = [
        asyncio.create_task(_follow(feeds, run_id, behind, after=2)),  # before the buffer
        asyncio.create_task(_follow(feeds, run_id, inside, after=7)),  # within it
    ]
    await asyncio.to_thread(_turn, runs, run_id, 10)
    await asyncio.to_thread(_settle, runs, run_id)
    await asyncio.wait_for(asyncio.gather(first, *tasks), 20)
    assert behind == list(range(3, 11)) and inside == [8, 9, 10]
