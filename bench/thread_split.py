"""Where a run's worker CPU goes, thread by thread: `python -m bench.thread_split
[--postgres] [--reps N] [--burst N]`.

Bursts of k = 3 runs, the agent's and the storeless loop's alternating, on one dev server and
one worker in this process (the loop bench's setup). Around each burst it reads every
thread's user + system CPU from /proc/self/task and groups the threads by what they do,
so the agent's extra CPU per run against the storeless loop can be read by part: the store
work its guarantees make (the store pool, the sync activities' pool, the kernel's share of
their writes) against what both loops do alike (the event loop, workflow activations, the
SDK's core). CPU of threads that ended during a burst is in "other": the process total is
read too.
"""

import argparse
import asyncio
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Thread names (Python's, else the kernel's comm) to the part they do. The store and tool
# prefixes are workers/compose.py's; the rest are the SDK's and asyncio's.
GROUPS = (
    ("MainThread", "event loop (activities' async code, client)"),
    ("agentrt-store", "store pool (async activities' store calls)"),
    ("agentrt-tool", "sync activities (tool and fence records, sync tools)"),
    ("asyncio", "default executor (tools' own I/O, the client's reads)"),
    ("temporal_workflow", "workflow activations"),
    ("workflow-proces", "workflow activations"),
    ("tokio-rt-worker", "SDK core (Rust)"),
)
OTHER = "other (threads that ended, housekeeping)"
STORE_PARTS = (GROUPS[1][1], GROUPS[2][1])
_TICKS = os.sysconf("SC_CLK_TCK")


def part_of(name: str) -> str:
    for prefix, part in GROUPS:
        if name.startswith(prefix):
            return part
    return OTHER


@dataclass(frozen=True)
class Snapshot:
    threads: Mapping[int, tuple[str, int, int]]  # native id -> (name, user ticks, sys ticks)
    process: tuple[int, int]  # the process's user and system ticks


def _ticks(stat: str) -> tuple[int, int]:
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]), int(fields[12])


def snapshot() -> Snapshot:
    names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    threads: dict[int, tuple[str, int, int]] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            user, system = _ticks((task / "stat").read_text())
        except OSError:
            continue  # ended meanwhile
        tid = int(task.name)
        threads[tid] = (names.get(tid, comm), user, system)
    return Snapshot(threads, _ticks(Path("/proc/self/stat").read_text()))


def split(before: Snapshot, after: Snapshot) -> Counter[str]:
    """CPU ticks by part between two snapshots; the kernel's share of every part is also
    counted under "system"; what no live thread accounts for is "other"."""
    parts: Counter[str] = Counter()
    for tid, (name, user, system) in after.threads.items():
        _, user0, system0 = before.threads.get(tid, (name, 0, 0))
        parts[part_of(re.sub(r"_\d+$", "", name))] += (user - user0) + (system - system0)
    total = sum(after.process) - sum(before.process)
    parts[OTHER] += max(0, total - sum(parts.values()))
    parts["total"] = total
    parts["system"] = after.process[1] - before.process[1]
    return parts


async def measure(
    kinds: Mapping[str, Callable[[], Awaitable[object]]], reps: int, burst: int
) -> dict[str, tuple[Counter[str], int, float]]:
    """kind -> (ticks by part, runs, seconds), bursts alternating kind by kind."""
    from bench.drive import all_of

    out = {kind: (Counter[str](), 0, 0.0) for kind in kinds}
    for _ in range(reps):
        for kind, once in kinds.items():
            before, start = snapshot(), time.perf_counter()
            await all_of(once() for _ in range(burst))
            ticks, runs, seconds = out[kind]
            ticks.update(split(before, snapshot()))
            out[kind] = (ticks, runs + burst, seconds + time.perf_counter() - start)
    return out


def table(results: Mapping[str, tuple[Counter[str], int, float]]) -> str:
    """ms of CPU per run by part, agent against the storeless loop."""
    (a_ticks, a_runs, a_s), (s_ticks, s_runs, s_s) = results["agent"], results["storeless"]

    def ms(ticks: Counter[str], runs: int, part: str) -> float:
        return ticks[part] * 1000 / _TICKS / runs

    order = [*dict.fromkeys(p for _, p in GROUPS), OTHER, "system", "total"]
    lines = [f"{'ms CPU per run (k = 3)':58} {'agent':>7} {'storeless':>9} {'extra':>7}"]
    for part in order:
        a, s = ms(a_ticks, a_runs, part), ms(s_ticks, s_runs, part)
        label = "  of which in the kernel" if part == "system" else part
        lines.append(f"{label:58} {a:7.1f} {s:9.1f} {a - s:+7.1f}")
    extra = ms(a_ticks, a_runs, "total") - ms(s_ticks, s_runs, "total")
    store = sum(ms(a_ticks, a_runs, p) - ms(s_ticks, s_runs, p) for p in STORE_PARTS)
    lines.append(
        f"ratio {ms(a_ticks, a_runs, 'total') / ms(s_ticks, s_runs, 'total'):.2f}x; runs/s"
        f" {a_runs / a_s:.1f} / {s_runs / s_s:.1f} ({a_runs / a_s / (s_runs / s_s):.2f}x);"
        f" the store's two pools: {store:+.1f} of the {extra:+.1f} ms extra"
    )
    return "\n".join(lines)


async def main(postgres: bool, reps: int, burst: int) -> None:
    from bench.drive import agent_once, all_of, loop_once
    from bench.harness import scratch_worker

    async with scratch_worker("agentrt-split-", postgres=postgres) as (b, _):
        kinds: dict[str, Callable[[], Awaitable[object]]] = {
            "agent": lambda: agent_once(b, 3),
            "storeless": lambda: loop_once(b, 3, stores=False),
        }
        for once in kinds.values():  # warm up: imports, pools, connections
            await all_of(once() for _ in range(10))
        print(table(await measure(kinds, reps, burst)))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--postgres", action="store_true", help="PostgreSQL (AGENTRT_POSTGRES_DSN)")
    p.add_argument("--reps", type=int, default=4, help="bursts per kind")
    p.add_argument("--burst", type=int, default=50, help="runs per burst")
    ns = p.parse_args()
    asyncio.run(main(ns.postgres, ns.reps, ns.burst))
