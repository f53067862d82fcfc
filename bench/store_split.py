"""Where the store's CPU goes inside a run, call by call: `python -m bench.store_split
[--postgres] [--reps N] [--burst N]`.

Bursts of k = 3 agent runs (the loop bench's mixed profile) on one dev server and one
worker in this process. Every store call an activity makes goes through one function
(`activities._common._store_call`, this project's own); here it is wrapped to read the
calling thread's CPU clock around the outermost call, so each store method's CPU per run
can be read beside its calls per run. `bench.store_calls` times the same calls on a quiet
thread in a tight loop; the two side by side say how much a call costs inside a loaded run
(caches shared with the event loop, the workflow threads and the SDK's core) against
alone. The wrapper's own cost (two clock reads a call) is in the figures.
"""

import argparse
import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import agentrt.activities._common as common


class Tally:
    """CPU seconds and calls by store method, counted at the outermost call of a thread
    (a store method that calls another through the same path counts once)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._depth = threading.local()

    def wrap(self, inner: Callable[..., Any]) -> Callable[..., Any]:
        def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._depth, "n", 0)
            self._depth.n = depth + 1
            start = time.thread_time()
            try:
                return inner(fn, *args, **kwargs)
            finally:
                self._depth.n = depth
                if depth == 0:
                    spent = time.thread_time() - start
                    name = getattr(fn, "__qualname__", type(fn).__name__)
                    with self._lock:
                        self.cpu[name] = self.cpu.get(name, 0.0) + spent
                        self.calls[name] += 1

        return timed

    def clear(self) -> None:
        with self._lock:
            self.cpu.clear()
            self.calls.clear()


@contextmanager
def tallied() -> Iterator[Tally]:
    tally = Tally()
    inner = common._store_call
    common._store_call = tally.wrap(inner)
    try:
        yield tally
    finally:
        common._store_call = inner


def table(tally: Tally, runs: int) -> str:
    lines = [f"{'store call (k = 3 agent run)':40} {'calls/run':>9} {'µs/call':>8} {'ms/run':>7}"]
    for name, cpu in sorted(tally.cpu.items(), key=lambda kv: -kv[1]):
        calls = tally.calls[name]
        lines.append(
            f"{name:40} {calls / runs:9.2f} {cpu / calls * 1e6:8.0f} {cpu / runs * 1e3:7.2f}"
        )
    total = sum(tally.cpu.values())
    lines.append(f"{'all store calls':40} {sum(tally.calls.values()) / runs:9.2f} "
                 f"{'':8} {total / runs * 1e3:7.2f}")  # fmt: skip
    return "\n".join(lines)


async def main(postgres: bool, reps: int, burst: int) -> None:
    from bench.drive import agent_once, all_of
    from bench.harness import scratch_worker

    with tallied() as tally:
        async with scratch_worker("agentrt-store-split-", postgres=postgres) as (b, _):
            await all_of(agent_once(b, 3) for _ in range(10))  # warm up
            tally.clear()
            for _ in range(reps):
                await all_of(agent_once(b, 3) for _ in range(burst))
        print(table(tally, reps * burst))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--postgres", action="store_true", help="PostgreSQL (AGENTRT_POSTGRES_DSN)")
    p.add_argument("--reps", type=int, default=4, help="bursts")
    p.add_argument("--burst", type=int, default=50, help="runs per burst (1: one at a time)")
    ns = p.parse_args()
    asyncio.run(main(ns.postgres, ns.reps, ns.burst))
