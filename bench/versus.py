"""Against the hand-written loops (bench/loop_workflow.py): the issue-12 and issue-26 targets.

Two baselines: the persistent loop (a turn row per model call; issue 12's targets) and the
storeless loop (the samples' loop, nothing stored of its own; issue 26's targets). Idle:
one run at a time, k tool calls of which the last is a non-idempotent write; agent, loop
and storeless runs interleaved run by run. Saturation: a burst of runs started at once,
runs/s and CPU per run, split between this process (worker + client) and the dev server.
The targets, the figures' shapes and the tables: bench/versus_report.py.
"""

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable

from agentrt.store.demo import DemoWorld
from bench.breakdown import Breakdown, RunSplit
from bench.config import BenchConfig
from bench.drive import BenchError, agent_once, all_of, loop_once, loop_workflow_id
from bench.harness import Bench
from bench.histories import fetch_facts
from bench.procstat import (
    cpu_seconds,
    database_cpu,
    database_cpu_since,
    dev_server_pids,
    total_cpu,
)
from bench.report import Report
from bench.sqlcount import SqlTally, counting
from bench.stats import Summary
from bench.versus_report import SATURATION_K, Burst, IdleRow, Saturation, tables


async def _check_one_write(bench: Bench, run_id: str) -> None:
    rows = await asyncio.to_thread(DemoWorld(bench.parts.ctx).ledger_count, run_id=run_id)
    if rows != 1:
        raise BenchError(f"run {run_id} wrote {rows} ledger rows, not 1")


async def idle_k(bench: Bench, k: int, cfg: BenchConfig, tally: SqlTally) -> IdleRow:
    for _ in range(cfg.warmup):
        await agent_once(bench, k)
        await loop_once(bench, k)
        await loop_once(bench, k, stores=False)
    kinds: dict[str, Callable[[], Awaitable[tuple[float, str]]]] = {
        "agent": lambda: agent_once(bench, k),
        "loop": lambda: loop_once(bench, k),
        "storeless": lambda: loop_once(bench, k, stores=False),
    }
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    ids: dict[str, list[str]] = {kind: [] for kind in kinds}
    for _ in range(cfg.runs):  # interleaved, so drift on a shared machine hits all alike
        for kind, once in kinds.items():
            elapsed, run_id = await once()
            samples[kind].append(elapsed)
            ids[kind].append(run_id)
    for kind_ids in ids.values():
        await _check_one_write(bench, kind_ids[-1])
    workflow_ids = {
        "agent": ids["agent"],
        "loop": [loop_workflow_id(i, stores=True) for i in ids["loop"]],
        "storeless": [loop_workflow_id(i, stores=False) for i in ids["storeless"]],
    }
    # Read after the timed runs, so fetching histories delays none of them.
    splits = {kind: RunSplit() for kind in workflow_ids}
    pieces = Breakdown()
    last_bytes: dict[str, int] = {}
    for i in range(cfg.runs):
        for kind, wids in workflow_ids.items():
            facts = await fetch_facts(bench.client, wids[i])
            splits[kind].add(facts)
            pieces.add(f"{kind} k={k}", facts)
            last_bytes[kind] = facts.proto_bytes
    return IdleRow(
        k,
        Summary.of(samples["agent"]),
        Summary.of(samples["loop"]),
        Summary.of(samples["storeless"]),
        last_bytes["agent"],
        last_bytes["loop"],
        last_bytes["storeless"],
        splits["agent"],
        splits["loop"],
        splits["storeless"],
        pieces,
        tally.per_run(workflow_ids["agent"]),
        tally.per_run(workflow_ids["storeless"]),
    )


async def burst(n: int, once: Callable[[], Awaitable[object]], *, postgres: bool) -> Burst:
    servers = dev_server_pids()
    database = database_cpu() if postgres else {}
    me = cpu_seconds(os.getpid())
    server = total_cpu(servers)
    start = time.perf_counter()
    await all_of(once() for _ in range(n))
    seconds = time.perf_counter() - start
    return Burst(
        n / seconds,
        (cpu_seconds(os.getpid()) - me) * 1000 / n,
        (total_cpu(servers) - server) * 1000 / n,
        database_cpu_since(database) * 1000 / n if postgres else None,
    )


def _mean_burst(bursts: list[Burst]) -> Burst:
    n = len(bursts)
    return Burst(
        n / sum(1 / b.runs_per_s for b in bursts),
        sum(b.worker_cpu_ms for b in bursts) / n,
        sum(b.server_cpu_ms for b in bursts) / n,
        _mean_of([b.database_cpu_ms for b in bursts]),
    )


def _mean_of(values: list[float | None]) -> float | None:
    """The mean, or None where a value is missing (a burst not on PostgreSQL)."""
    known = [v for v in values if v is not None]
    return None if not known or len(known) < len(values) else sum(known) / len(known)


async def saturation(bench: Bench, cfg: BenchConfig) -> Saturation:
    k = SATURATION_K
    postgres = bench.parts.engine.dialect.name == "postgresql"
    kinds: dict[str, Callable[[], Awaitable[object]]] = {
        "loop": lambda: loop_once(bench, k),
        "storeless": lambda: loop_once(bench, k, stores=False),
        "agent": lambda: agent_once(bench, k),
    }
    bursts: dict[str, list[Burst]] = {kind: [] for kind in kinds}
    order = list(kinds)
    for _ in range(cfg.burst_reps):
        # Alternating, so drift hits every kind alike; the order reverses each repetition
        # (loop, storeless, agent; then agent, storeless, loop), so that no kind always
        # bursts first (on a shared machine, order has moved runs/s: bench/HISTORY.md set 3).
        for kind in order:
            bursts[kind].append(await burst(cfg.burst, kinds[kind], postgres=postgres))
        order.reverse()
    return Saturation(*(_mean_burst(bursts[kind]) for kind in ("agent", "loop", "storeless")))


async def measure(bench: Bench, cfg: BenchConfig) -> Report:
    rows: list[IdleRow] = []
    with counting(bench.parts.engine) as tally:
        for k in cfg.tools:
            print(f"  vs hand-written loops: idle k={k}", file=sys.stderr, flush=True)
            rows.append(await idle_k(bench, k, cfg, tally))
    print(f"  vs hand-written loops: {cfg.burst} started at once", file=sys.stderr, flush=True)
    return tables(rows, await saturation(bench, cfg), cfg, tally)
