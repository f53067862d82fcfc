"""The in-process wake of live followers: when a publish of this process commits a run's
live pieces, its followers in this process read at once instead of at their next poll.

A follower and the model worker often share a process (an embedded worker, the benchmark,
the tests): there the bell takes the poll interval off the time to first token. Across
processes on SQLite, a publisher's wake datagram (store/live/wake.py) reaches this bell
through `ring_remote`, with a digest of the run id for its only content; on PostgreSQL the
operator API hears the live table's NOTIFY instead. A ring is only a hint to read now: the
store stays what a follower reads, so a ring for another database's run of the same id
costs one read and nothing else.

Publishes commit in worker threads and followers wait on their own event loops, so a ring
reaches each waiter through its loop's thread-safe call."""

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator

from agentrt.store.live.wake import Listeners, digest


class Subscription:
    """One follower's wake for one run, from `subscribe` to the end of its block."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()

    def clear(self) -> None:
        """Call before reading: a commit after it rings again."""
        self._event.clear()

    def ring(self) -> None:  # any thread
        with contextlib.suppress(RuntimeError):  # the follower's loop has closed
            self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, seconds: float) -> bool:
        """Until rung (True) or `seconds` pass (False)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)
        return self._event.is_set()


class Bell:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[Subscription]] = {}
        self._digests: dict[bytes, str] = {}  # of the runs in `_waiting`
        self._listeners: set[Callable[[str], None]] = set()
        self._remote: set[Callable[[bytes], None]] = set()
        self.remote_rings = 0  # wakes from other processes (tests)

    @contextlib.contextmanager
    def listening(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: Callable[[str], None],
        remote: Callable[[bytes], None] | None = None,
    ) -> Iterator[None]:
        """Every ring, of any run, as `fn(run_id)` on `loop`, for the block: how the operator
        API's follows (api/wake.py), which wait by run on their own, hear this process's
        publishes; and, with `remote`, every other process's as `remote(digest)`."""

        def call(run_id: str) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(fn, run_id)

        def relay(to: Callable[[bytes], None]) -> Callable[[bytes], None]:
            def call_remote(run_digest: bytes) -> None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(to, run_digest)

            return call_remote

        call_remote = relay(remote) if remote is not None else None
        with self._lock:
            self._listeners.add(call)
            if call_remote is not None:
                self._remote.add(call_remote)
        try:
            yield
        finally:
            with self._lock:
                self._listeners.discard(call)
                if call_remote is not None:
                    self._remote.discard(call_remote)

    @contextlib.contextmanager
    def subscribe(self, run_id: str) -> Iterator[Subscription]:
        sub = Subscription()
        with self._lock:
            self._waiting.setdefault(run_id, set()).add(sub)
            self._digests[digest(run_id)] = run_id
        try:
            yield sub
        finally:
            with self._lock:
                subs = self._waiting.get(run_id)
                if subs is not None:
                    subs.discard(sub)
                    if not subs:
                        del self._waiting[run_id]
                        self._digests.pop(digest(run_id), None)

    def ring(self, run_id: str) -> None:
        """Wake the run's followers in this process (any thread; cheap with none)."""
        with self._lock:
            subs = list(self._waiting.get(run_id, ()))
            listeners = list(self._listeners)
        for sub in subs:
            sub.ring()
        for call in listeners:
            call(run_id)

    def ring_remote(self, run_digest: bytes) -> None:
        """Another process published for the run of this digest (store/live/wake.py; any
        thread): wake its followers here, and hand the digest to the listeners."""
        with self._lock:
            self.remote_rings += 1
            run_id = self._digests.get(run_digest)
            subs = list(self._waiting.get(run_id, ())) if run_id is not None else []
            remote = list(self._remote)
        for sub in subs:
            sub.ring()
        for call in remote:
            call(run_digest)


# One per process: publishers and followers of one process find each other whatever
# store context each was built with.
LIVE_BELL = Bell()
# And its wake sockets, one per SQLite database followed here (store/live/wake.py).
LIVE_WAKES = Listeners(LIVE_BELL.ring_remote)
