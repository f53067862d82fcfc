"""A worker in its own process (and process group), killed the way a crash kills it.

The kill tests need the worker outside the test process: an in-process worker cannot be
SIGKILLed without taking pytest with it, and only a real process death drops the worker's
Temporal polls, its heartbeats and its database connections all at once.
"""

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client

from agentrt.core.settings import Settings


def worker_env(
    settings: Settings,
    *,
    temporal_address: str,
    task_queue: str,
    block_at: str = "",
    marker_dir: Path | None = None,
) -> dict[str, str]:
    """The environment of `python -m workers` for this test: every setting explicit."""
    # Inherited AGENTRT_* variables (a developer's shell, CI) must not leak into the worker.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env.update(
        AGENTRT_DATABASE_URL=settings.database.resolved_url(),
        AGENTRT_TEMPORAL_ADDRESS=temporal_address,
        AGENTRT_TASK_QUEUE=task_queue,
        AGENTRT_SEAL_KEYS=settings.read_seal_keys(),  # the test's keys: it reads what it wrote
        AGENTRT_PROFILES_FILE=str(settings.worker.profiles_file),
        AGENTRT_RULES_FILE=str(settings.providers.rules_file),
        AGENTRT_DATA_DIR=str(settings.database.data_dir),
        AGENTRT_FAULT_BLOCK_AT=block_at,
        # Buffered output would be lost on SIGKILL, and the log is what explains a failure.
        PYTHONUNBUFFERED="1",
    )
    if marker_dir is not None:
        env["AGENTRT_FAULT_MARKER_DIR"] = str(marker_dir)
    return env


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, within: float = 10.0) -> None:
        """SIGKILL the whole process group: no drain, no cleanup, like a machine loss."""
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=within)

    def stop(self, within: float = 10.0) -> None:
        """Graceful SIGTERM, escalating to SIGKILL when the drain does not end in time."""
        if not self.alive():
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class WorkerPool:
    """Every worker a test spawned, so teardown leaves none running whatever happened."""

    workdir: Path
    spawned: list[WorkerProcess] = field(default_factory=list)

    def spawn(self, env: dict[str, str], python: str = sys.executable) -> WorkerProcess:
        """`python -m agentrt.workers`; `python` may be another environment's interpreter."""
        log = self.workdir / f"worker-{len(self.spawned)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [python, "-m", "agentrt.workers"],
                env=env,
                # A directory without a `.env`, so only `env` configures the worker.
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killpg reaches all of it
            )
        worker = WorkerProcess(proc, log)
        self.spawned.append(worker)
        return worker

    def close(self) -> None:
        for worker in self.spawned:
            worker.stop()


async def wait_for_marker(path: Path, worker: WorkerProcess, within: float) -> None:
    """Poll for the fault point's marker file; fail fast when the worker died instead."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await asyncio.to_thread(path.exists):
        if not worker.alive():
            raise AssertionError(
                f"worker exited ({worker.proc.returncode}) before {path.name}:\n"
                + worker.log_tail()
            )
        if loop.time() > deadline:
            raise AssertionError(
                f"fault point {path.name} not reached within {within}s:\n" + worker.log_tail()
            )
        await asyncio.sleep(0.05)


@dataclass
class Armed:
    """A worker armed to block at one fault point (it leaves a marker file there) for the
    test to kill, and the unarmed worker that takes its queue over afterwards."""

    pool: WorkerPool
    worker: WorkerProcess
    marker: Path
    unarmed: dict[str, str]  # same settings, Temporal and queue; no fault point

    async def reached(self, within: float = 30.0) -> None:
        await wait_for_marker(self.marker, self.worker, within)

    def successor(self) -> WorkerProcess:
        return self.pool.spawn(self.unarmed)


def arm_worker(
    pool: WorkerPool,
    settings: Settings,
    client: Client,
    task_queue: str,
    point: str,
    marker_dir: Path,
) -> Armed:
    """Spawn a worker on `task_queue` that blocks at `point` (see workers/faults.py)."""
    address = client.service_client.config.target_host
    unarmed = worker_env(settings, temporal_address=address, task_queue=task_queue)
    env = worker_env(
        settings, temporal_address=address, task_queue=task_queue, block_at=point,
        marker_dir=marker_dir,
    )  # fmt: skip
    return Armed(pool, pool.spawn(env), marker_dir / point, unarmed)


Arm = Callable[[str], Armed]  # the `arm` fixture: a fault point in, its armed worker out
