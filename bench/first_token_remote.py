"""The follower of `python -m bench.first_token --remote`: in a process of its own, as a
client of a SQLite store is (the operator API, a Python follower on another process), so
the worker's publishes reach it across processes, not through this process's bell.

`python -m bench.first_token_remote URL SEAL_KEYS [POLL]` reads a run id per line on stdin,
follows that run (`starter.live.follow_store`, the Python API's follow, polling every POLL
seconds: default its own 0.01; 0.2 is the operator API's `poll_seconds`) until its first
text (a live delta, or the committed turn when that came first) and prints the
`time.monotonic()` of it (the system-wide clock on Linux: the bench compares it with its
own)."""

import asyncio
import subprocess
import sys
import time
from contextlib import aclosing
from pathlib import Path

from agentrt.contracts.live import LiveDelta
from agentrt.starter.live import follow_store
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.record import RunStore

ROOT = Path(__file__).resolve().parents[1]


class RemoteFollower:
    """The bench's handle on the follower process."""

    def __init__(self, url: str, keys: str, poll: float = 0.01) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.first_token_remote", url, keys, str(poll)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        if self._proc.stdout.readline() != "ready\n":
            raise RuntimeError("the follower process did not start")

    async def first_text(self, run_id: str) -> float:
        """The follower's monotonic clock at the run's first text."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(run_id + "\n")
        self._proc.stdin.flush()
        line = await asyncio.to_thread(self._proc.stdout.readline)
        if not line.strip() or line.startswith("none"):
            raise AssertionError(f"the follower saw no text of {run_id}: {line!r}")
        return float(line)

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=30)


async def _first(runs: RunStore, live: LiveStore, run_id: str, poll: float) -> float | None:
    async with aclosing(follow_store(runs, live, run_id, poll_seconds=poll)) as items:
        async for item in items:
            if (isinstance(item, LiveDelta) and item.kind == "delta") or (
                not isinstance(item, LiveDelta) and item.kind.value == "llm"
            ):
                return time.monotonic()
    return None


async def _serve(url: str, keys: str, poll: float) -> None:
    engine, ctx = open_store(url, Sealer.from_b64(keys), run_migrations=False)
    runs, live = RunStore(ctx), LiveStore(ctx)
    print("ready", flush=True)
    while line := await asyncio.to_thread(sys.stdin.readline):
        seen = await _first(runs, live, line.strip(), poll)
        print("none" if seen is None else repr(seen), flush=True)
    engine.dispose()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2], float(sys.argv[3]) if sys.argv[3:] else 0.01))
