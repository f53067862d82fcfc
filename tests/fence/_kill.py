"""A run's worker PROCESS SIGKILLed at a fault point (workers/faults.py), then the run
settled by a fresh worker: the shared steps of test_fence_kill.py and the reconcile kill
tests (test_reconcile_kill.py, test_reconcile_steps_kill.py) and test_read_ride_kill.py."""

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client, WorkflowHistory

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.views import EventView, RunView
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from tests.workers._proc import WorkerPool, WorkerProcess, wait_for_marker, worker_env
from tests.workflows._replay import fetch

PROMPT = "Please refund order 1042"  # lookup_order, then issue_refund (call r2.1), an answer
REFUND_CALL = "r2.1"


@dataclass(frozen=True)
class Killed:
    run_id: str
    started: float  # time.monotonic() when the run was started
    reached: float  # ... when the worker had reached the fault point
    killed: float  # ... when it was dead


@dataclass(frozen=True)
class Killer:
    pool: WorkerPool
    address: str  # the Temporal dev server's
    client: Client
    runtime: AgentRuntime
    settings: Settings
    parts: WorkerResources
    task_queue: str
    markers: Path  # where the blocked worker drops its marker file

    async def kill_at(
        self,
        point: str,
        prompt: str = PROMPT,
        profile: str = "fast-writes",
        env: dict[str, str] | None = None,
    ) -> Killed:
        """Start `prompt` in `profile` (short write timeouts) on a worker that blocks at
        `point`, and SIGKILL that worker's process group once it is there."""
        faulty = self.armed(point, env)
        started = time.monotonic()
        # Accepted, not begun: the run waits in Temporal for the worker process, however
        # long a loaded machine takes to start it (the start's own bound is not under test).
        run_id = await self.runtime.start(profile, prompt, wait="accepted")
        await wait_for_marker(self.markers / point, faulty, within=90.0)
        reached = time.monotonic()
        faulty.kill()
        return Killed(run_id, started, reached, time.monotonic())

    async def kill_next_at(self, point: str, env: dict[str, str] | None = None) -> None:
        """A successor that takes the run over and blocks at `point` (a later step of the
        same write: its reconciliation, its re-execution), SIGKILLed there in turn."""
        marker = self.markers / point
        marker.unlink(missing_ok=True)  # a point reached before, by the worker killed last
        faulty = self.armed(point, env)
        await wait_for_marker(marker, faulty, within=90.0)
        faulty.kill()

    def armed(self, point: str, env: dict[str, str] | None = None) -> WorkerProcess:
        """A worker that blocks at `point` (drops its marker there)."""
        armed = worker_env(
            self.settings,
            temporal_address=self.address,
            task_queue=self.task_queue,
            block_at=point,
            marker_dir=self.markers,
        )
        return self.pool.spawn({**armed, **(env or {})})

    def fresh(self, **extra_env: str) -> WorkerProcess:
        """A worker with no fault point armed (and `extra_env` set)."""
        env = worker_env(self.settings, temporal_address=self.address, task_queue=self.task_queue)
        env.update(extra_env)
        return self.pool.spawn(env)

    async def settle(self, run_id: str, fresh: WorkerProcess, within: float) -> RunView:
        try:
            return await asyncio.wait_for(self.runtime.result(run_id), within)
        except TimeoutError:
            raise AssertionError(f"run did not settle:\n{fresh.log_tail()}") from None

    async def refunded_through(
        self, points: Sequence[str], within: float, env: dict[str, str] | None = None
    ) -> tuple[Killed, RunView, EventView]:
        """Start the refund on a worker killed at `points[0]`, kill each successor at the
        next point, then let a fresh worker settle the run within `within` seconds: it
        answered with exactly one refund (`refunded_once`). Returns the first kill, the
        settled run and the refund's tool event."""
        killed = await self.kill_at(points[0], env=env)
        for point in points[1:]:
            await self.kill_next_at(point, env=env)
        fresh = self.fresh(**(env or {}))
        view = await self.settle(killed.run_id, fresh, within)
        return killed, view, await self.refunded_once(killed.run_id, view, fresh)

    async def history(self, run_id: str) -> WorkflowHistory:
        return await fetch(self.client, run_id)

    async def refunded_once(self, run_id: str, view: RunView, fresh: WorkerProcess) -> EventView:
        """The run answered with exactly one refund in the ledger and its fence cleared:
        the refund's tool event, which is no error."""
        assert DemoWorld(self.parts.ctx).ledger_count(run_id=run_id, call_id=REFUND_CALL) == 1
        assert view.status is RunStatus.COMPLETED, fresh.log_tail()
        assert view.outcome is Outcome.COMPLETED
        assert view.termination_reason is TerminationReason.ANSWERED
        assert view.pending_effect is None  # the fence is cleared
        events = await self.runtime.events(run_id)
        [refund] = [
            e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"
        ]
        assert refund.payload["is_error"] is False
        return refund
