"""The tests' seeded slices of the fuzz job's surfaces (bench/fuzz*.py)."""

import asyncio
from collections.abc import Callable
from typing import Any

from bench.fuzz_core import LogTrap, Tally


async def fuzz_slice(
    surface: Callable[..., list[Tally]], *args: Any, cases: int, **kw: Any
) -> list[Tally]:
    """`surface(*args, cases, None, trap, **kw)` off the event loop (the surfaces block on
    HTTP and the database), seed None, with a log trap; each tally held to what every slice
    must show: all its cases run, no failure. The caller checks what its surface accepts."""
    with LogTrap() as trap:
        tallies = await asyncio.to_thread(surface, *args, cases, None, trap, **kw)
    for t in tallies:
        assert t.cases == cases and t.failures == [], (t.surface, t.cases, t.failures)
    return tallies
