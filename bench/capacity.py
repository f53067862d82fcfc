"""`python -m bench.capacity`: the fleet on one dev server. Worker *processes*
(`agentrt-worker`, as deployed) poll one queue; the client, in this process, measures

- throughput: agent runs completed per second with 1, 2, ... workers (same load);
- memory: each worker's RSS idle, then with N runs parked waiting for approval.

PostgreSQL (AGENTRT_POSTGRES_DSN, a fresh schema dropped afterwards): several processes
share the store. `--quick` is a small N for a smoke check; report what ran.
"""

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import func, select
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.run import RunResult
from agentrt.core.devserver import free_port, start_dev_server, wait_for_port
from agentrt.core.settings import DEFAULT_POSTGRES_DSN, Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from bench.database import bench_database
from bench.drive import all_of
from bench.harness import PROFILES_FILE, RESULTS_DIR, RULES_FILE


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__)
    p.add_argument("--workers", default="1,2,3", help="worker counts for throughput")
    p.add_argument("--runs", type=int, default=60, help="runs per throughput measurement")
    p.add_argument("--concurrency", type=int, default=20, help="runs in flight")
    p.add_argument("--waiting", type=int, default=1000, help="runs parked for approval")
    p.add_argument("--quick", action="store_true", help="small sizes (runs 12, waiting 100)")
    ns = p.parse_args(argv)
    if ns.quick:
        ns.runs, ns.waiting, ns.concurrency = 12, 100, 6
    return ns


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def worker_processes(count: int, env: dict[str, str], log: Path) -> Iterator[list[int]]:
    procs = []
    with log.open("ab") as out:
        try:
            for _ in range(count):
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "agentrt.workers", "--log-level", "WARNING"],
                        env=env,
                        stdout=out,
                        stderr=out,
                    )
                )
            yield [p.pid for p in procs]
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=40)
                except subprocess.TimeoutExpired:
                    p.kill()


async def until_polled(client: Client, queue: str, count: int) -> None:
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    for _ in range(600):
        described = await client.workflow_service.describe_task_queue(request)
        if len({p.identity for p in described.pollers}) >= count:
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{count} workers never polled {queue}")


async def throughput(runtime: AgentRuntime, client: Client, total: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            run_id = await runtime.start("bench-read", "bench tools=1", initiator="bench")
            result = await client.get_workflow_handle(run_id, result_type=RunResult).result()
            if result.status is not RunStatus.COMPLETED:
                raise RuntimeError(f"run {run_id} ended {result.status.value}")

    start = time.perf_counter()
    await all_of(one() for _ in range(total))
    return total / (time.perf_counter() - start)


def waiting_count(ctx: StoreContext) -> int:
    with ctx.sessions() as s:
        query = select(func.count()).where(RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value)
        return int(s.scalar(query) or 0)


async def park(runtime: AgentRuntime, ctx: StoreContext, total: int) -> float:
    gate = asyncio.Semaphore(50)

    async def one() -> None:
        async with gate:
            await runtime.start("bench-approval", "bench wait", initiator="bench")

    start = time.perf_counter()
    await all_of(one() for _ in range(total))
    for _ in range(2400):  # at most 20 minutes
        if await asyncio.to_thread(waiting_count, ctx) >= total:
            return time.perf_counter() - start
        await asyncio.sleep(0.5)
    raise RuntimeError(f"{total} runs never all waited for approval")


async def measure(ns: argparse.Namespace) -> list[str]:
    counts = [int(x) for x in ns.workers.split(",") if x.strip()]
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    log = RESULTS_DIR / "capacity.log"
    port = free_port()
    server = await start_dev_server(port=port, ui_port=None, db_file=None, log=log)
    lines: list[str] = []
    try:
        await wait_for_port(port)
        dsn = os.environ.get("AGENTRT_POSTGRES_DSN", DEFAULT_POSTGRES_DSN)
        with tempfile.TemporaryDirectory() as tmp, bench_database(Path(tmp), dsn) as url:
            keys = f"bench:{Sealer.new_key_b64()}"
            base = Settings().replace(
                database={"url": url, "data_dir": Path(tmp)},
                privacy={"seal_keys": keys},
                providers={"rules_file": RULES_FILE},
                worker={"profiles_file": PROFILES_FILE},
                temporal={"address": f"127.0.0.1:{port}"},
            )
            parts = build(base)  # migrates once, before the workers start
            runs = RunStore(parts.ctx)
            client = await Client.connect(base.temporal.address, data_converter=data_converter())
            env = {
                **os.environ,
                "AGENTRT_DATABASE_URL": url,
                "AGENTRT_SEAL_KEYS": keys,
                "AGENTRT_DATA_DIR": tmp,
                "AGENTRT_RULES_FILE": str(RULES_FILE),
                "AGENTRT_PROFILES_FILE": str(PROFILES_FILE),
                "AGENTRT_TEMPORAL_ADDRESS": base.temporal.address,
            }
            lines.append(
                f"throughput: {ns.runs} runs of bench-read (1 tool call, 4 activities), "
                f"{ns.concurrency} in flight"
            )
            for count in counts:
                queue = f"cap-{uuid.uuid4().hex[:8]}"
                with worker_processes(count, {**env, "AGENTRT_TASK_QUEUE": queue}, log):
                    await until_polled(client, queue, count)
                    runtime = AgentRuntime(client, runs, queue)
                    await throughput(runtime, client, min(4, ns.runs), ns.concurrency)  # warm
                    rate = await throughput(runtime, client, ns.runs, ns.concurrency)
                lines.append(f"  {count} worker process(es): {rate:.1f} runs/s")
                print(lines[-1], file=sys.stderr, flush=True)
            queue = f"cap-{uuid.uuid4().hex[:8]}"
            with worker_processes(1, {**env, "AGENTRT_TASK_QUEUE": queue}, log) as pids:
                await until_polled(client, queue, 1)
                runtime = AgentRuntime(client, runs, queue)
                await throughput(runtime, client, 4, 4)
                idle = rss_mib(pids[0])
                took = await park(runtime, parts.ctx, ns.waiting)
                await asyncio.sleep(2)
                parked = rss_mib(pids[0])
            lines.append(
                f"memory: one worker process, RSS {idle:.0f} MiB after warm-up, {parked:.0f} MiB "
                f"with {ns.waiting} runs waiting for approval "
                f"(+{(parked - idle) * 1024 / max(ns.waiting, 1):.0f} KiB per run; "
                f"parked in {took:.0f} s)"
            )
            parts.close()
    finally:
        server.terminate()
        await server.wait()
    return lines


def main(argv: list[str] | None = None) -> None:
    ns = parse(argv)
    lines = asyncio.run(measure(ns))
    print(f"capacity ({os.cpu_count()} cores, dev server in memory, PostgreSQL)")
    for line in lines:
        print(line)
    sys.stdout.flush()
    os._exit(0)  # the Temporal client's threads can abort interpreter teardown (see cli)


if __name__ == "__main__":
    main()
