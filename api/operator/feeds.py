"""One poll per followed run, shared by every follower of it in this API process.

A follower of a run (`GET /runs/{id}/events` as SSE, `GET /runs/{id}/live`) used to read the
store itself each time it woke: a hundred followers of one run made a hundred reads of its
events (and of its status) per commit. Now the first follower of a run starts one poller
task that reads the run's events into a bounded buffer and its status, and wakes the
followers; each follower keeps its own offset and takes from the buffer what comes after
it. The poller never waits for a follower: one that falls behind the buffer (or resumes
from before it) reads the store from its own offset until it is back inside the buffer, so
it loses nothing. The last follower to leave stops the poller.

The buffer holds exactly the events with `floor < position <= last`, in commit order (an
event's `position`, migration 0018: its `sequence` is reserved before it is written, so
events commit out of sequence order): the poller starts from the run's first event, and
trimming raises `floor` to the last event dropped."""

import asyncio
import bisect
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass, field

from agentrt.api.wake import Waker
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import EventView
from agentrt.store.runs.record import RunStore

BUFFER = 1000  # events kept per followed run
BATCH = 500  # events per read
WAKE_SECONDS = 2.0  # a poller re-reads at least this often
log = logging.getLogger(__name__)


@dataclass
class Feed:
    """A followed run as its poller has read it so far."""

    run_id: str
    floor: int = -1
    last: int = -1
    events: list[EventView] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    status: RunStatus | None = None
    ended: bool = False  # terminal (or gone) and every event read
    error: BaseException | None = None
    followers: int = 0
    stopped: bool = False  # its last follower left
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: "asyncio.Task[None] | None" = None

    def add(self, batch: list[EventView]) -> None:
        for e in batch:
            if e.position > self.last:
                self.events.append(e)
                self.positions.append(e.position)
                self.last = e.position
        if len(self.events) > BUFFER:
            drop = len(self.events) - BUFFER
            self.floor = self.positions[drop - 1]
            del self.events[:drop], self.positions[:drop]

    def after(self, position: int) -> list[EventView]:
        start = bisect.bisect_right(self.positions, position)
        return self.events[start : start + BATCH]

    def tick(self) -> None:
        """Wake every follower waiting on the event they took before they read."""
        woken, self.changed = self.changed, asyncio.Event()
        woken.set()


class Feeds:
    """The runs followed in this process, each with its one poller."""

    def __init__(
        self,
        runs: RunStore,
        waker: Waker,
        probe: Callable[[str], Hashable] | None = None,
        held: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        """`held(run_id)`: whether Temporal holds the run open and no worker has begun it
        (an accepted start): its follow waits for it to begin rather than ending."""
        self._runs, self._waker, self._probe, self._held = runs, waker, probe, held
        self._feeds: dict[str, Feed] = {}
        self.reads = 0  # the pollers' store reads (tests and the load bench)
        self.catchups = 0  # reads of followers behind the buffer

    def followed(self) -> int:
        return len(self._feeds)

    @contextlib.asynccontextmanager
    async def join(self, run_id: str) -> AsyncIterator[Feed]:
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = self._feeds[run_id] = Feed(run_id)
            feed.task = asyncio.create_task(self._poll(feed), name=f"feed {run_id}")
        feed.followers += 1
        try:
            yield feed
        finally:
            feed.followers -= 1
            if feed.followers == 0:
                # Not awaited: a follower leaving never waits for a read in flight. The flag
                # stops the poller should the cancel be lost (Python 3.11's wait_for can
                # swallow one that lands as its wait ends).
                feed.stopped = True
                self._drop(feed)
                if feed.task is not None:
                    feed.task.cancel()

    async def take(self, feed: Feed, after: int) -> tuple[list[EventView], bool]:
        """The events after position `after` (at most a batch), and whether the feed has ended with
        none left for this follower. Raises what stopped the poller."""
        if after < feed.floor:  # behind the buffer: its own read, from its own offset
            self.catchups += 1
            batch = await asyncio.to_thread(self._runs.events, feed.run_id, after, BATCH)
            if batch:
                return batch, False
        batch = feed.after(after)
        if batch:
            return batch, False
        if feed.error is not None:
            raise feed.error
        return [], feed.ended

    async def _read(self, feed: Feed) -> list[EventView]:
        self.reads += 1
        return await asyncio.to_thread(self._runs.events, feed.run_id, feed.last, BATCH)

    async def _poll(self, feed: Feed) -> None:
        run_id = feed.run_id
        try:
            while not feed.stopped:
                ticket = self._waker.ticket(run_id)
                if batch := await self._read(feed):
                    feed.add(batch)
                    feed.tick()
                    continue
                self.reads += 1
                status = await asyncio.to_thread(self._runs.status, run_id)
                if status is None and self._held is not None:
                    if await self._held(run_id):  # not begun yet: follow it until it ends
                        feed.tick()
                        await self._waker.wait(
                            run_id, ticket, within=WAKE_SECONDS, probe=self._probe
                        )
                        continue
                    # Begun meanwhile (its row exists now), or gone.
                    status = await asyncio.to_thread(self._runs.status, run_id)
                    if status is not None and not status.terminal:
                        continue
                if status is None or status.terminal:
                    # The settling event commits with the status: reads now are certain to
                    # see it.
                    while batch := await self._read(feed):
                        feed.add(batch)
                    feed.status, feed.ended = status, True
                    feed.tick()
                    return
                feed.tick()  # live followers read their live output on each wake
                await self._waker.wait(run_id, ticket, within=WAKE_SECONDS, probe=self._probe)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the store is away: each follower's stream ends on it
            log.warning("follow of %s stopped (%s)", run_id, type(exc).__name__)
            feed.error = exc
            self._drop(feed)  # the next follower starts afresh
            feed.tick()

    def _drop(self, feed: Feed) -> None:
        if self._feeds.get(feed.run_id) is feed:
            del self._feeds[feed.run_id]


async def changed(feed_event: asyncio.Event, within: float) -> None:
    """Until the feed ticks or `within` seconds pass (asyncio.timeout, not wait_for: a
    client that goes away cancels this, and that cancel must not be lost)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within):
            await feed_event.wait()


class TokenChecks:
    """Whether a follow's token is still active, read once per token per interval for all
    the streams that token opened (a hundred followers on one token: one read, not a
    hundred)."""

    def __init__(self, active: Callable[[str], bool], seconds: float) -> None:
        self._active, self._seconds = active, seconds
        self._seen: dict[str, tuple[float, bool]] = {}
        self._reading: dict[str, asyncio.Future[bool]] = {}

    async def active(self, token_id: str) -> bool:
        now = time.monotonic()
        seen = self._seen.get(token_id)
        if seen is not None and now - seen[0] < self._seconds:
            return seen[1]
        reading = self._reading.get(token_id)
        if reading is None:  # the token's streams that ask meanwhile share this one read
            reading = asyncio.ensure_future(self._read(token_id))
            self._reading[token_id] = reading
        return await asyncio.shield(reading)

    async def _read(self, token_id: str) -> bool:
        # Stamped when the read began: the answer is as old as the moment it was asked.
        asked = time.monotonic()
        try:
            ok = await asyncio.to_thread(self._active, token_id)
        finally:
            self._reading.pop(token_id, None)
        if len(self._seen) > 10_000:
            self._seen.clear()
        self._seen[token_id] = (asked, ok)
        return ok
