"""Wake-ups for live follows. On PostgreSQL one connection LISTENs to the channels the
store's triggers NOTIFY on commit (migration 0006), and a follower waits for its key; on
SQLite (or while that connection is down) a follower polls, and on SQLite a model worker's
live output wakes it at once through the wake sockets (store/live/wake.py, `notify_digest`)."""

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable

from sqlalchemy import Engine

from agentrt.store.db.engine import is_postgres
from agentrt.store.live.wake import digest

RUN_CHANNEL, A2A_CHANNEL = "agentrt_run_event", "agentrt_a2a_event"
# With NOTIFY live a follower still re-reads this often: a safety net, not the mechanism.
NOTIFY_SAFETY_SECONDS = 15.0
_KEYS = 10_000
# Sequence columns are INTEGER (32-bit on PostgreSQL): a resume point past this fails in the
# database, so both follows (operator SSE, A2A streams) refuse it first.
MAX_SEQUENCE = 2**31 - 1
log = logging.getLogger(__name__)


class Waker:
    def __init__(self, poll_seconds: float) -> None:
        self.poll_seconds = poll_seconds
        self.live = False  # a LISTEN connection is up
        self.wakeups = 0  # notifications received (tests and metrics)
        self._versions: OrderedDict[str, int] = OrderedDict()
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._marks: OrderedDict[str, Hashable] = OrderedDict()
        # The keys waited for, by their digest: how another process's wake (a digest of a
        # run id, store/live/wake.py) finds its key here.
        self._by_digest: OrderedDict[bytes, str] = OrderedDict()

    def ticket(self, key: str) -> int:
        """Take before reading: a commit after the read, before `wait`, is not missed."""
        return self._versions.get(key, 0)

    async def wait(
        self,
        key: str,
        ticket: int,
        within: float | None = None,
        probe: Callable[[str], Hashable] | None = None,
    ) -> bool:
        """Until `key` is notified (True) or the poll interval (or `within`) passes.

        Without NOTIFY, a `probe` (a cheap read whose value changes with what the follower
        reads) is polled once per interval for all the key's followers, which then wait as
        for a notification: fifty followers of a run cost one read per interval, not fifty
        rounds of reads."""
        if not self.live:
            if probe is None:
                await asyncio.sleep(min(self.poll_seconds, within or self.poll_seconds))
                return False
            if key not in self._pollers:
                self._pollers[key] = asyncio.create_task(self._poll(key, probe))
        event = asyncio.Event()
        self._waiters.setdefault(key, set()).add(event)
        self._remember(key)
        try:
            if self._versions.get(key, 0) != ticket:
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    event.wait(), min(NOTIFY_SAFETY_SECONDS, within or NOTIFY_SAFETY_SECONDS)
                )
            return event.is_set()
        finally:
            waiting = self._waiters.get(key)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._waiters[key]

    async def _poll(self, key: str, probe: Callable[[str], Hashable]) -> None:
        """Notify `key` when its probe's value changes, while anyone waits for it."""
        try:
            while key in self._waiters and not self.live:
                try:
                    mark = await asyncio.to_thread(probe, key)
                except Exception as exc:  # the store is away: wake followers to find out
                    log.warning("follow probe failed (%s)", type(exc).__name__)
                    mark = None
                if mark is None or self._marks.get(key) != mark:
                    self._marks[key] = mark
                    self._marks.move_to_end(key)
                    while len(self._marks) > _KEYS:
                        self._marks.popitem(last=False)
                    self.notify(key)
                await asyncio.sleep(self.poll_seconds)
        finally:
            self._pollers.pop(key, None)

    def notify(self, key: str) -> None:
        self.wakeups += 1
        self._versions[key] = self._versions.pop(key, 0) + 1
        while len(self._versions) > _KEYS:
            self._versions.popitem(last=False)  # an evicted key only wakes spuriously
        for event in self._waiters.get(key, ()):
            event.set()

    def _remember(self, key: str) -> None:
        mark = digest(key)
        self._by_digest[mark] = key
        self._by_digest.move_to_end(mark)
        while len(self._by_digest) > _KEYS:
            self._by_digest.popitem(last=False)

    def notify_digest(self, mark: bytes) -> None:
        """Another process committed live output of the key with this digest (SQLite)."""
        key = self._by_digest.get(mark)
        if key is not None:
            self.notify(key)

    def _wake_all(self) -> None:
        for key in list(self._waiters):
            self.notify(key)

    async def listen(self, engine: Engine, stop: asyncio.Event) -> None:
        """Hold a LISTEN connection until `stop`; reconnect after a failure."""
        if not is_postgres(engine):
            return
        import psycopg

        dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        delay = 0.5
        while not stop.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {RUN_CHANNEL}")
                    await conn.execute(f"LISTEN {A2A_CHANNEL}")
                    self.live, delay = True, 0.5
                    self._wake_all()  # anything committed while we were not listening
                    stopping = asyncio.create_task(stop.wait())
                    try:
                        gen = conn.notifies()
                        while not stop.is_set():
                            nxt = asyncio.ensure_future(anext(gen))
                            done, _ = await asyncio.wait(
                                {nxt, stopping}, return_when=asyncio.FIRST_COMPLETED
                            )
                            if nxt not in done:
                                nxt.cancel()
                                with contextlib.suppress(BaseException):
                                    await nxt
                                break
                            self.notify(nxt.result().payload)
                    finally:
                        stopping.cancel()
            except (OSError, psycopg.Error) as exc:
                log.warning("LISTEN connection lost (%s); followers poll meanwhile", exc)
            finally:
                self.live = False
                self._wake_all()
            if not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 10.0)


async def finish(task: "asyncio.Task[None]", *, within: float) -> None:
    """Let a background task end after its stop event; cancel it if it has not within
    `within` seconds, so shutdown never hangs on a stuck connection. Its errors are logged,
    not raised: the process is going down anyway."""
    done, _ = await asyncio.wait({task}, timeout=within)
    if not done:
        log.warning("background task %s did not stop within %.0f s; cancelling", task, within)
        task.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await task
