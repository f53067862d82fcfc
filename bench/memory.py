"""Memory per waiting run: worker RSS with N runs cached while they wait for approval.

Each kind gets a fresh worker process (bench/memworker.py) on its own task queue, so its
RSS is the worker's alone: the agent (profile bench-approve: one tool call that needs
approval) and the hand-written loop (waiting for a signal before its tool call). The runs
are left waiting; the dev server that holds them is the section's own and is discarded.
"""

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus
from agentrt.core.devserver import extra_args
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.db.engine import make_engine, make_sessionmaker
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from bench.config import BenchConfig
from bench.drive import BenchError, all_of
from bench.harness import dev_server
from bench.loop_activities import TURNS
from bench.loop_workflow import WORKFLOW_LOOP, LoopInput
from bench.procstat import cpu_seconds, rss_bytes
from bench.report import Report, Table, verdict
from bench.stats import ratio

TARGET_MB = 300  # agent worker RSS with 1000 runs waiting
START_CONCURRENCY = 20
MB = 1024 * 1024


@dataclass(frozen=True)
class MemRow:
    kind: str
    runs: int
    idle_mb: float  # the worker once one run has gone through (imports, sandbox warm)
    waiting_mb: float  # with `runs` more waiting
    cpu_ms_per_run: float  # worker CPU to bring a run to its wait

    @property
    def per_run_kb(self) -> float:
        return (self.waiting_mb - self.idle_mb) * 1024 / self.runs


class _Worker:
    def __init__(self, client: Client, settings: Settings, task_queue: str) -> None:
        target = client.service_client.config.target_host
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.memworker", target, task_queue,
             settings.database.resolved_url(), settings.read_seal_keys(),
             str(settings.database.data_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise BenchError("the memory worker did not start")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _gated(n: int, one: Callable[[int], Awaitable[None]]) -> None:
    gate = asyncio.Semaphore(START_CONCURRENCY)

    async def go(i: int) -> None:
        async with gate:
            await one(i)

    await all_of(go(i) for i in range(n))


async def _until(count: Callable[[], int], n: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while (got := await asyncio.to_thread(count)) < n:
        if time.monotonic() > deadline:
            raise BenchError(f"only {got} of {n} runs reached their wait")
        await asyncio.sleep(0.5)
    await asyncio.sleep(1.0)  # the workflow task after the last activity


async def _measure_kind(
    kind: str, client: Client, settings: Settings, ctx: StoreContext, n: int
) -> MemRow:
    queue = f"bench-mem-{uuid.uuid4().hex[:8]}"
    worker = _Worker(client, settings, queue)
    try:
        pid = worker.proc.pid
        runs = RunStore(ctx)
        tag = uuid.uuid4().hex[:8]
        if kind == "agent":
            runtime = AgentRuntime(client, runs, queue)

            async def one(i: int) -> None:
                await runtime.start("bench-approve", "bench approve", initiator=f"mem-{tag}")

            def count() -> int:
                with ctx.sessions() as s:
                    return int(s.scalar(select(func.count()).select_from(RunRow).where(
                        RunRow.initiator == f"mem-{tag}",
                        RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value)) or 0)  # fmt: skip
        else:

            async def one(i: int) -> None:
                run_id = f"mem-{tag}-{i}"
                await client.start_workflow(
                    WORKFLOW_LOOP, LoopInput(run_id=run_id, tools=1, wait_for_approval=True),
                    id=run_id, task_queue=queue,
                )  # fmt: skip

            def count() -> int:
                with ctx.sessions() as s:
                    return int(s.scalar(select(func.count()).select_from(TURNS).where(
                        TURNS.c.run_id.like(f"mem-{tag}-%"))) or 0)  # fmt: skip

        # One run first, so imports and the sandbox's first load are not counted per run.
        await one(n)
        await _until(count, 1, 60)
        idle, cpu = rss_bytes(pid), cpu_seconds(pid)
        await _gated(n, one)
        await _until(count, n + 1, 60 + n * 0.5)
        waiting = rss_bytes(pid)
        cpu_ms = (cpu_seconds(pid) - cpu) * 1000 / n
    finally:
        worker.stop()
    return MemRow(kind, n, idle / MB, waiting / MB, cpu_ms)


async def measure(cfg: BenchConfig, settings: Settings) -> Report:
    engine = make_engine(settings.database.resolved_url())
    ctx = StoreContext(make_sessionmaker(engine), Sealer.from_b64(settings.read_seal_keys()))
    rows: list[MemRow] = []
    try:
        async with dev_server(extra_args()) as client:
            for kind in ("loop", "agent"):
                print(f"  memory: {kind}, {cfg.memory_runs} runs waiting", file=sys.stderr,
                      flush=True)  # fmt: skip
                rows.append(await _measure_kind(kind, client, settings, ctx, cfg.memory_runs))
    finally:
        engine.dispose()
    return tables(rows)


def tables(rows: list[MemRow]) -> Report:
    table = Table(
        "Memory: worker RSS with runs waiting for approval (separate worker process)",
        ["kind", "runs waiting", "RSS idle MB", "RSS waiting MB", "kB per waiting run",
         "worker CPU ms per run"],
    )  # fmt: skip
    report = Report([table])
    by = {r.kind: r for r in rows}
    for r in rows:
        table.rows.append([r.kind, str(r.runs), f"{r.idle_mb:.0f}", f"{r.waiting_mb:.0f}",
                           f"{r.per_run_kb:.0f}", f"{r.cpu_ms_per_run:.1f}"])  # fmt: skip
    agent, loop = by["agent"], by["loop"]
    # The figure is at 1000 runs: extrapolate linearly from what was measured.
    at_1000 = agent.idle_mb + agent.per_run_kb * 1000 / 1024
    table.notes += [
        f"agent per waiting run / loop per waiting run: "
        f"{ratio(agent.per_run_kb, loop.per_run_kb):.2f}x.",
        f"agent worker RSS at 1000 waiting runs: {at_1000:.0f} MB"
        f"{'' if agent.runs == 1000 else ' (extrapolated from ' + str(agent.runs) + ')'}; "
        f"target < {TARGET_MB} MB: {verdict(at_1000 < TARGET_MB)}.",
    ]
    report.figures.update(
        {
            "memory.agent_kb_per_run": agent.per_run_kb,
            "memory.loop_kb_per_run": loop.per_run_kb,
            "memory.agent_mb_at_1000": at_1000,
            "memory.agent_idle_mb": agent.idle_mb,
            "memory.agent_cpu_ms_per_run": agent.cpu_ms_per_run,
        }
    )
    return report
