"""Across processes on SQLite: a live publish in one process (here a child standing for the
model worker, tests/live/_publisher.py) wakes the run's followers in another at once
through the wake sockets (store/live/wake.py), and a follower whose wake is lost still
reads the same text from the store at its poll. PostgreSQL wakes through NOTIFY instead:
these tests are SQLite's."""

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt.api.operator import feeds, sse
from agentrt.api.settings import ApiSettings
from agentrt.contracts.live import LiveDelta
from agentrt.core.settings import Settings
from agentrt.starter.live import follow_store
from agentrt.store.live.bell import LIVE_BELL
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.api.conftest import serving
from tests.api.ops_helpers import frames, http, name, token
from tests.conftest import TEST_SEAL_KEYS
from tests.store.test_store import _begin

ROOT = Path(__file__).resolve().parents[2]
POLL = 30.0  # a follower that waited for its poll would miss every bound below


class Publisher:
    def __init__(self, proc: "subprocess.Popen[str]") -> None:
        self._proc = proc

    async def publish(self, run_id: str, sequence: int, offset: int, text: str) -> None:
        line = json.dumps({"run_id": run_id, "sequence": sequence, "offset": offset, "text": text})
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        assert await asyncio.to_thread(self._proc.stdout.readline) == "published\n"


@contextmanager
def publisher(url: str, *, wake: bool = True) -> Iterator[Publisher]:
    flags = [] if wake else ["--no-wake"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.live._publisher", url, TEST_SEAL_KEYS, *flags],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield Publisher(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def _sqlite_only(live: LiveStore) -> Path:
    if live.wake_dir is None:
        pytest.skip("PostgreSQL: other processes' follows wake on the live table's NOTIFY")
    return live.wake_dir


async def _follow(
    runs: RunStore, live: LiveStore, run_id: str, poll: float, out: "asyncio.Queue[str]"
) -> None:
    # Cancelled at the end: the follow's blocks close as the cancel unwinds it.
    async for item in follow_store(runs, live, run_id, poll_seconds=poll):
        if isinstance(item, LiveDelta):
            await out.put(item.text)


def _bound(wake_dir: Path) -> bool:
    return wake_dir.is_dir() and any(p.suffix == ".sock" for p in wake_dir.iterdir())


async def _idle(wake_dir: Path) -> None:
    """Until the follower's wake socket is bound, and then a little: it waits idle."""
    for _ in range(200):
        if await asyncio.to_thread(_bound, wake_dir):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)


async def _stop(task: "asyncio.Task[None]") -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _next_sequence(runs: RunStore, run_id: str) -> int:
    return max(e.sequence for e in runs.events(run_id, -1)) + 1


def _a_run(parts: WorkerResources) -> tuple[RunStore, LiveStore, Path, str, int]:
    """A begun run on SQLite (skipped on PostgreSQL): its stores, the wake sockets' folder,
    its id and the sequence its first live piece takes."""
    runs, live = RunStore(parts.ctx), LiveStore(parts.ctx)
    wake_dir = _sqlite_only(live)
    run_id = _begin(parts)
    return runs, live, wake_dir, run_id, _next_sequence(runs, run_id)


async def test_a_publish_in_another_process_wakes_a_python_follower_at_once(
    parts: WorkerResources, settings: Settings
) -> None:
    runs, live, wake_dir, run_id, seq = _a_run(parts)
    got: asyncio.Queue[str] = asyncio.Queue()
    rings = LIVE_BELL.remote_rings
    with publisher(settings.database.resolved_url()) as child:
        follower = asyncio.create_task(_follow(runs, live, run_id, POLL, got))
        try:
            await _idle(wake_dir)
            for offset, text in ((0, "Hello"), (5, " there")):
                began = time.monotonic()
                await child.publish(run_id, seq, offset, text)
                assert await asyncio.wait_for(got.get(), 10.0) == text
                assert time.monotonic() - began < POLL / 3, "the follower waited for its poll"
                await asyncio.sleep(0.3)  # idle again before the next
        finally:
            await _stop(follower)
    assert LIVE_BELL.remote_rings >= rings + 2
    # The follow's end closed this process's socket: no wake goes to a process gone.
    assert not [p for p in wake_dir.iterdir() if p.name.startswith(f"{os.getpid()}-")]


async def test_a_follower_whose_wake_is_lost_reads_the_same_text_at_its_poll(
    parts: WorkerResources, settings: Settings
) -> None:
    runs, live, wake_dir, run_id, seq = _a_run(parts)
    got: asyncio.Queue[str] = asyncio.Queue()
    # Its publisher rings no one: every wake to this process is lost.
    with publisher(settings.database.resolved_url(), wake=False) as child:
        follower = asyncio.create_task(_follow(runs, live, run_id, 1.0, got))
        try:
            await _idle(wake_dir)
            rings = LIVE_BELL.remote_rings
            await child.publish(run_id, seq, 0, "Hello")
            await child.publish(run_id, seq, 5, " there")
            text = await asyncio.wait_for(got.get(), 10.0)
            if text == "Hello":
                text += await asyncio.wait_for(got.get(), 10.0)
            assert text == "Hello there"
            assert LIVE_BELL.remote_rings == rings, "a wake arrived: not the poll's read"
        finally:
            await _stop(follower)


async def test_a_publish_in_another_process_wakes_an_idle_sse_follow_on_sqlite(
    client: Client, a2a_settings: ApiSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every wait of the follow that could end on its own: the token recheck, the feed's
    # re-read and the store poll.
    monkeypatch.setattr(sse, "TOKEN_RECHECK_SECONDS", POLL)
    monkeypatch.setattr(feeds, "WAKE_SECONDS", POLL)
    settings = a2a_settings.replace(api={"poll_seconds": POLL})
    async with serving(client, settings) as live:
        _sqlite_only(LiveStore(live.parts.ctx))
        who = name("alice")
        run_id = _begin(live.parts)
        runs = RunStore(live.parts.ctx)
        seq = _next_sequence(runs, run_id)
        async with http(live, token(live, who, "runs:read", "runs:read-all")) as c:
            got: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

            async def follow() -> None:
                async with c.stream("GET", f"/runs/{run_id}/live") as reply:
                    async for f in frames(reply):
                        await got.put((f.event, str(f.data.get("text", ""))))

            with publisher(live.settings.database.resolved_url()) as child:
                follower = asyncio.create_task(follow())
                try:
                    # The run's first event: the follow has read the run; then it waits
                    # (its poll: 30 s).
                    assert (await asyncio.wait_for(got.get(), 10.0))[0] != "delta"
                    await asyncio.sleep(0.5)
                    assert got.empty()
                    began = time.monotonic()
                    await child.publish(run_id, seq, 0, "Hello")
                    assert await asyncio.wait_for(got.get(), 10.0) == ("delta", "Hello")
                    waited = time.monotonic() - began
                finally:
                    await _stop(follower)
    assert waited < POLL / 3, f"{waited:.1f} s: the follow waited for its poll"


async def test_an_sse_follow_whose_wake_is_lost_gets_the_delta_at_its_poll(
    client: Client, a2a_settings: ApiSettings
) -> None:
    settings = a2a_settings.replace(api={"poll_seconds": 0.3})
    async with serving(client, settings) as live:
        _sqlite_only(LiveStore(live.parts.ctx))
        run_id = _begin(live.parts)
        seq = _next_sequence(RunStore(live.parts.ctx), run_id)
        async with http(live, token(live, name("alice"), "runs:read", "runs:read-all")) as c:
            got: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

            async def follow() -> None:
                async with c.stream("GET", f"/runs/{run_id}/live") as reply:
                    async for f in frames(reply):
                        await got.put((f.event, str(f.data.get("text", ""))))

            # Its publisher rings no one: every wake to the API is lost.
            with publisher(live.settings.database.resolved_url(), wake=False) as child:
                follower = asyncio.create_task(follow())
                try:
                    assert (await asyncio.wait_for(got.get(), 10.0))[0] != "delta"
                    rings = LIVE_BELL.remote_rings
                    await child.publish(run_id, seq, 0, "Hello")
                    assert await asyncio.wait_for(got.get(), 10.0) == ("delta", "Hello")
                    assert LIVE_BELL.remote_rings == rings, "a wake arrived: not the poll's read"
                finally:
                    await _stop(follower)
