"""How long this process's event loop goes without running a 10 ms ticker: the longest
stall of everything else on the loop (a server in this process included).

On a shared, loaded machine the operating system alone can hold a process for 100 ms and
more, so a stall is judged against a quiet baseline measured the same way in the same
test: `held(loud, quiet)` allows 100 ms, or twice the quiet run's worst, whichever is
more. The stalls these tests guard against were seconds long."""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

LIMIT = 0.1


@dataclass
class Lags:
    gaps: list[float] = field(default_factory=list)

    @property
    def worst(self) -> float:
        return max(self.gaps, default=0.0)


@asynccontextmanager
async def ticking() -> AsyncIterator[Lags]:
    lags, stop = Lags(), asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            lags.gaps.append(now - last - 0.01)
            last = now

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
        f"the event loop was held for {loud.worst * 1000:.0f} ms "
        f"(allowed {allowed * 1000:.0f} ms; quiet, the worst was {quiet.worst * 1000:.0f} ms)"
    )
