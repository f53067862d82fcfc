"""`python -m bench.chaos_reconcile`: the run time of a reconciled run (issue 40 item 2).

`--runs` runs of `bench mixed=3` (two reads, then one fenced refund) in the `bench-reconcile`
profile (default timeouts), one at a time. Each run's worker is SIGKILLed inside the refund's
write window, and, in the scenarios that say so, the successor is killed again at a step of
the reconciliation or inside the re-execution it releases: the scenarios cycle through
SCENARIOS. The refund declares a 1 s attempt bound (bench/bounded_tools.py); with
`--unbounded` it declares none and every reconciliation waits the profile's `write_seconds`
(60 s), as before the bound existed.

A run's time is from its start to its COMPLETED row. Each trap is killed the moment it
reaches its point; its successor starts then (a worker start, a few seconds here, is within
the heartbeat timeout after which the run goes on). Every run must end COMPLETED with
exactly one ledger row for its refund.
"""

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from agentrt.contracts.enums import RunStatus
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.demo import DemoWorld
from bench import bounded_tools
from bench.chaos import chaos_stack, pct, run_chaos

PROFILE, PROMPT, REFUND_CALL = "bench-reconcile", "bench mixed=3", "r3.1"
CLAIM, EFFECT = "write.after_claim", "write.after_effect"
Row = tuple[str, float, RunStatus, int]  # scenario, seconds, status, ledger rows
SCENARIOS: list[list[str]] = [
    [CLAIM],
    [EFFECT],
    ["record.before_clear"],
    [CLAIM, CLAIM],  # the re-execution killed too
    [CLAIM, "reconcile.after_void"],  # between the void and its report
    [CLAIM, EFFECT],
    [EFFECT, "reconcile.after_record"],
]


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    log: Path

    def ready(self) -> bool:
        return b"worker polling" in self.log.read_bytes()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


class Spawner:
    def __init__(self, env: dict[str, str], work: Path) -> None:
        self.env, self.work, self.count = env, work, 0
        self.spawned: list[Worker] = []

    def close(self) -> None:
        """Every worker it started stopped, whatever happened."""
        for worker in self.spawned:
            worker.kill()

    async def up(self, point: str | None) -> Worker:
        """A worker, armed at `point` (None: plain), once it polls."""
        worker = self.spawn(point)
        while not worker.ready():
            if worker.proc.poll() is not None:
                raise RuntimeError(f"worker exited:\n{worker.log.read_text()[-2000:]}")
            await asyncio.sleep(0.1)
        return worker

    def spawn(self, point: str | None) -> Worker:
        self.count += 1
        log = self.work / f"worker-{self.count}.log"
        env = dict(self.env)
        if point is not None:
            env.update(AGENTRT_FAULT_BLOCK_AT=point, AGENTRT_FAULT_MARKER_DIR=str(self.marks))
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "agentrt.workers"], env=env, cwd=self.work,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.spawned.append(Worker(proc, log))
        return self.spawned[-1]

    @property
    def marks(self) -> Path:
        return self.work / "marks"


async def reached(spawner: Spawner, point: str, within: float = 300.0) -> None:
    marker = spawner.marks / point
    end = time.monotonic() + within
    while not marker.exists():
        if time.monotonic() > end:
            raise RuntimeError(f"{point} not reached within {within:g} s")
        await asyncio.sleep(0.05)
    marker.unlink()


async def one_run(
    runtime: AgentRuntime, spawner: Spawner, points: list[str]
) -> tuple[str, float, RunStatus]:
    """(run id, seconds from its start to its end, final status) of a run whose workers
    are killed at `points` in turn, each the moment it gets there."""
    trap = await spawner.up(points[0])
    started = time.monotonic()
    run_id = await runtime.start(PROFILE, PROMPT, initiator="bench")
    for i, point in enumerate(points):
        await reached(spawner, point)
        trap.kill()
        # Its successor starts now: a worker start (~3 s here) is within the heartbeat
        # timeout that lets the run go on, so it delays nothing a fleet would not wait.
        trap = await spawner.up(points[i + 1] if i + 1 < len(points) else None)
    view = await runtime.result(run_id)
    took = time.monotonic() - started
    trap.stop()
    return run_id, took, view.status


async def main_async(ns: argparse.Namespace) -> int:
    async with chaos_stack("chaos-reconcile", ns.postgres) as stack:
        if not ns.unbounded:
            stack.env.update(bounded_tools.worker_env())
        spawner = Spawner(stack.env, stack.work)
        rows: list[Row] = []
        try:
            await all_runs(ns, stack.runtime, spawner, stack.ctx, rows)
        finally:
            spawner.close()
    return report(ns, rows)


async def all_runs(
    ns: argparse.Namespace, runtime: AgentRuntime, spawner: Spawner, ctx: StoreContext,
    rows: list[Row],
) -> None:  # fmt: skip
    for i in range(ns.runs):
        points = SCENARIOS[i % len(SCENARIOS)]
        run_id, took, status = await one_run(runtime, spawner, points)
        ledger = DemoWorld(ctx).ledger_count(run_id=run_id, call_id=REFUND_CALL)
        rows.append((" > ".join(points), took, status, ledger))
        print(f"{rows[-1][0]:<45}{took:>7.1f}  {status.value} {ledger}", flush=True)


def report(ns: argparse.Namespace, rows: list[Row]) -> int:
    took = sorted(r[1] for r in rows)
    one = sorted(r[1] for r in rows if " > " not in r[0])
    bound = "no attempt bound (write_seconds 60 s)" if ns.unbounded else "a 1 s attempt bound"
    print(f"reconciled runs, refund with {bound}, {'PostgreSQL' if ns.postgres else 'SQLite'}:")
    print(f"run time s: p50 {pct(took, 0.5):.1f}, p95 {pct(took, 0.95):.1f}, max {max(took):.1f}"
          f"; one kill only: p50 {pct(one, 0.5):.1f}, p95 {pct(one, 0.95):.1f}")  # fmt: skip
    ok = all(r[2] is RunStatus.COMPLETED and r[3] == 1 for r in rows)
    print("every run COMPLETED with exactly one ledger row" if ok else "NOT every run right")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.chaos_reconcile", description=__doc__)
    p.add_argument("--runs", type=int, default=21, help="cycling through the scenarios")
    p.add_argument("--unbounded", action="store_true", help="the refund declares no bound")
    return run_chaos(p, main_async, argv)


if __name__ == "__main__":
    sys.exit(main())
