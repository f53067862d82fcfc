"""How long this process's event loop goes without running a 10 ms ticker: the longest
stall of everything else on the loop (a server in this process included), counted as
what this process computed during it.

A gap of the ticker is wall time, and on a shared, loaded machine (the parallel suite, a
second pass, the lint, other processes) the operating system alone holds a process for
100 ms and more: a gap of 141 ms with nothing of ours running failed a check judged by
wall time (CI). The stalls these tests guard against are computing on the loop (a parser,
a pattern), seconds of CPU, or another thread of this process holding the GIL as long:
either is CPU time of this process. So each gap is counted as `min(gap, the process's CPU
time over it)`: a gap in which the process was not scheduled counts for what it computed,
a stall computed on the loop counts whole (its CPU time is its length, or more on two
cores), however loaded the machine. (A loop blocked waiting, a `time.sleep` on it, is not
what these tests look for and is not counted.)

The loud run is then judged against a quiet baseline measured the same way in the same
test: `held(loud, quiet)` allows 100 ms, or twice the quiet run's worst, whichever is
more; and `held_in_every_try` repeats the loud run (up to three times) until one passes:
a guard that is missing stalls every try, a passing load spike does not repeat each time."""

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

LIMIT = 0.1
TICK = 0.01
TRIES = 3


@dataclass
class Lags:
    gaps: list[float] = field(default_factory=list)  # wall time past each 10 ms sleep
    busy: list[float] = field(default_factory=list)  # of each gap, what the process computed

    @property
    def worst(self) -> float:
        """The longest stall this process computed (see the module's docstring)."""
        return max(self.busy, default=0.0)

    @property
    def worst_wall(self) -> float:
        return max(self.gaps, default=0.0)


@asynccontextmanager
async def ticking() -> AsyncIterator[Lags]:
    lags, stop = Lags(), asyncio.Event()

    async def tick() -> None:
        last, last_cpu = time.perf_counter(), time.process_time()
        while not stop.is_set():
            await asyncio.sleep(TICK)
            now, cpu = time.perf_counter(), time.process_time()
            gap = max(0.0, now - last - TICK)
            lags.gaps.append(gap)
            lags.busy.append(min(gap, cpu - last_cpu))
            last, last_cpu = now, cpu

    task = asyncio.create_task(tick())
    try:
        yield lags
    finally:
        stop.set()
        await task


def held(loud: Lags, quiet: Lags) -> str | None:
    """Why the loud run held the loop too long, or None."""
    if len(loud.gaps) <= 5:
        return "the ticker hardly ran"
    allowed = max(LIMIT, 2 * quiet.worst)
    if loud.worst < allowed:
        return None
    return (
        f"the event loop was held for {loud.worst * 1000:.0f} ms of this process's CPU time "
        f"({loud.worst_wall * 1000:.0f} ms the longest wall-clock gap; allowed "
        f"{allowed * 1000:.0f} ms; quiet, the worst was {quiet.worst * 1000:.0f} ms)"
    )


async def held_in_every_try(
    loud: Callable[[], Awaitable[object]], quiet: Lags, tries: int = TRIES
) -> str | None:
    """Run `loud` under the ticker until a try passes `held`; the last try's reason when
    none does (each try's reasons, so a failure shows they agree)."""
    reasons: list[str] = []
    for _ in range(tries):
        async with ticking() as lags:
            await loud()
        problem = held(lags, quiet)
        if problem is None:
            return None
        reasons.append(problem)
    return f"in each of {tries} tries: " + " | ".join(reasons)
