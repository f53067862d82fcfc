"""Bursts of one kind for a profiler to sample (py-spy): `python -m bench.profile_burst
KIND SECONDS [--postgres]` with KIND agent or storeless (or both, comma-separated), on SQLite
or on PostgreSQL (AGENTRT_POSTGRES_DSN, a fresh schema); prints this process's pid, then waits for a
3 s (attach the profiler), then bursts of k = 3 runs for SECONDS, and prints the
CPU per run of this process (worker and client)."""

import asyncio
import os
import sys
import time

from bench.drive import agent_once, all_of, loop_once
from bench.harness import scratch_worker
from bench.procstat import cpu_seconds


async def main(
    kinds: list[str], seconds: float, burst: int = 50, *, postgres: bool = False
) -> None:
    async with scratch_worker("agentrt-prof-", postgres=postgres) as (b, _):
        once = {
            "agent": lambda: agent_once(b, 3),
            "storeless": lambda: loop_once(b, 3, stores=False),
        }
        for kind in kinds:  # warm up
            await all_of(once[kind]() for _ in range(10))
        print(os.getpid(), flush=True)
        await asyncio.sleep(3)  # the profiler attaches
        for kind in kinds:
            runs, me, end = 0, cpu_seconds(os.getpid()), time.monotonic() + seconds
            while time.monotonic() < end:
                await all_of(once[kind]() for _ in range(burst))
                runs += burst
            cpu = (cpu_seconds(os.getpid()) - me) * 1000 / runs
            print(f"{kind}: {runs} runs, {cpu:.1f} ms CPU per run", flush=True)


if __name__ == "__main__":
    asyncio.run(
        main(sys.argv[1].split(","), float(sys.argv[2]), postgres="--postgres" in sys.argv[3:])
    )
