"""`python -m bench.chaos`: time-to-settle while workers are SIGKILLed under load.

Two phases on one dev server and one database, each starting `--runs` agent runs (3 read-only
tool calls each) against `--workers` worker processes:

- calm: nothing is killed;
- chaos: every `--kill-every` seconds one worker is SIGKILLed (the whole process group, like
  a machine loss) and a fresh one is started in its place.

Each run's time-to-settle is from its start to the moment its row is terminal. The report
prints p50/p95/max per phase and the ratio chaos/calm, and checks that every run settled
COMPLETED. Issue 9 item 10: recovery in seconds, not minutes.
"""

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrt.contracts.errors import RunNotFoundError
from agentrt.core.devserver import extra_args
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.record import RunStore
from bench.database import bench_database
from bench.harness import bench_settings, dev_server

PROMPT = "bench tools=3"
PROFILE = "bench-read"


@dataclass
class Fleet:
    env: dict[str, str]
    workdir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    kills: int = 0

    def spawn(self, env: dict[str, str] | None = None) -> None:
        """A worker process with the fleet's environment (or `env`)."""
        log = (self.workdir / f"worker-{len(self.procs)}.log").open("wb")
        self.procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "agentrt.workers"],
                env=env or self.env,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]

    def kill_one(self, rng: random.Random) -> None:
        victim = rng.choice(self.alive())
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        self.kills += 1
        self.spawn()

    def stop(self) -> None:
        for p in self.alive():
            os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def worker_env(settings: Settings, address: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env.update(
        AGENTRT_DATABASE_URL=settings.database.resolved_url(),
        AGENTRT_TEMPORAL_ADDRESS=address,
        AGENTRT_TASK_QUEUE=settings.temporal.task_queue,
        AGENTRT_SEAL_KEYS=settings.read_seal_keys(),
        AGENTRT_PROFILES_FILE=str(settings.worker.profiles_file),
        AGENTRT_RULES_FILE=str(settings.providers.rules_file),
        AGENTRT_DATA_DIR=str(settings.database.data_dir),
        PYTHONUNBUFFERED="1",
    )
    return env


@dataclass
class Stack:
    """What a chaos bench runs against: its scratch folder, a fresh store, a client runtime
    on a Temporal dev server, and the environment of a worker process for both."""

    work: Path
    ctx: StoreContext
    runtime: AgentRuntime
    env: dict[str, str]


@asynccontextmanager
async def chaos_stack(name: str, postgres: bool) -> AsyncIterator[Stack]:
    """A fresh database (PostgreSQL at AGENTRT_POSTGRES_DSN, else the settings' DSN, with
    `postgres`; else SQLite) and a dev server, both gone on exit."""
    with tempfile.TemporaryDirectory(prefix=f"agentrt-{name}-") as tmp:
        work = Path(tmp)
        dsn = os.environ.get("AGENTRT_POSTGRES_DSN", Settings().database.postgres_dsn)
        with bench_database(work, dsn if postgres else None) as url:
            settings = bench_settings(
                database_url=url, seal_keys=f"b:{Sealer.new_key_b64()}", data_dir=work
            )
            engine, ctx = open_store(url, Sealer.from_b64(settings.read_seal_keys()))
            try:
                async with dev_server(extra_args()) as client:
                    env = worker_env(settings, client.service_client.config.target_host)
                    runtime = AgentRuntime(client, RunStore(ctx), settings.temporal.task_queue)
                    yield Stack(work, ctx, runtime, env)
            finally:
                engine.dispose()


def run_chaos(
    p: argparse.ArgumentParser,
    main_async: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
    argv: list[str] | None,
) -> int:
    """A chaos bench's `main`: its own arguments (in `p`) and `--postgres`, then the run."""
    p.add_argument("--postgres", action="store_true", help="on PostgreSQL, not SQLite")
    return asyncio.run(main_async(p.parse_args(argv)))


async def settle_times(
    runtime: AgentRuntime, runs: int, deadline_s: float
) -> tuple[list[float], dict[str, int]]:
    started: dict[str, float] = {}
    for _ in range(runs):
        run_id = await runtime.start(PROFILE, PROMPT, initiator="bench")
        started[run_id] = time.monotonic()
    settled: dict[str, float] = {}
    outcomes: dict[str, int] = {}
    end = time.monotonic() + deadline_s
    while len(settled) < runs and time.monotonic() < end:
        for run_id, t0 in started.items():
            if run_id in settled:
                continue
            try:
                view = await runtime.status(run_id)
            except RunNotFoundError:
                continue  # begun by a worker that was killed: not yet
            if view.status.terminal:
                settled[run_id] = time.monotonic() - t0
                outcomes[view.status.value] = outcomes.get(view.status.value, 0) + 1
        await asyncio.sleep(0.2)
    outcomes["UNSETTLED"] = runs - len(settled)
    return sorted(settled.values()), outcomes


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


async def chaos_killer(fleet: Fleet, every: float, stop: asyncio.Event, seed: int) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), every)
        except TimeoutError:
            await asyncio.to_thread(fleet.kill_one, rng)


async def main_async(ns: argparse.Namespace) -> int:
    async with chaos_stack("chaos", ns.postgres) as stack:
        fleet = Fleet(stack.env, stack.work)
        for _ in range(ns.workers):
            fleet.spawn()
        try:
            calm, calm_out = await settle_times(stack.runtime, ns.runs, ns.deadline)
            stop = asyncio.Event()
            killer = asyncio.create_task(chaos_killer(fleet, ns.kill_every, stop, ns.seed))
            chaos, chaos_out = await settle_times(stack.runtime, ns.runs, ns.deadline)
            stop.set()
            await killer
        finally:
            fleet.stop()
    print(f"time-to-settle, {ns.runs} runs x 3 tool calls, {ns.workers} workers, "
          f"{'PostgreSQL' if ns.postgres else 'SQLite'}")  # fmt: skip
    print(f"{'phase':<8}{'p50 s':>8}{'p95 s':>8}{'max s':>8}  outcomes")
    for name, xs, out in (("calm", calm, calm_out), ("chaos", chaos, chaos_out)):
        print(f"{name:<8}{pct(xs, 0.5):>8.2f}{pct(xs, 0.95):>8.2f}{max(xs or [0]):>8.2f}  {out}")
    print(f"kills: {fleet.kills} (one every {ns.kill_every:g} s)")
    if calm and chaos:
        print(f"chaos/calm p50 {pct(chaos, 0.5) / pct(calm, 0.5):.2f}x, "
              f"p95 {pct(chaos, 0.95) / pct(calm, 0.95):.2f}x")  # fmt: skip
    ok = calm_out.get("COMPLETED") == ns.runs and chaos_out.get("COMPLETED") == ns.runs
    print("every run settled COMPLETED" if ok else "NOT every run settled COMPLETED")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__)
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--kill-every", type=float, default=4.0, help="seconds between kills")
    p.add_argument("--deadline", type=float, default=600.0, help="give up waiting after")
    p.add_argument("--seed", type=int, default=7)
    return run_chaos(p, main_async, argv)


if __name__ == "__main__":
    sys.exit(main())
