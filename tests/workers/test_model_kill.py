"""Recovery in seconds: a worker SIGKILLed in the middle of a model call.

Before heartbeats, the call that was running on the dead worker waited out its whole
start-to-close timeout (120 s) before Temporal retried it. Now the model activity heartbeats
while it runs, and a missed heartbeat (5 s) hands the call to another worker.
"""

import asyncio
import time
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.profiles import Timeouts
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from tests.workers._proc import WorkerPool, wait_for_marker, worker_env

# Heartbeat timeout (5 s) + retry interval (1 s) + the dead worker's sticky queue (3 s),
# with room for a loaded machine: far below the model's start-to-close timeout.
RECOVER_WITHIN = 30.0
assert RECOVER_WITHIN < Timeouts().model_seconds / 3


@pytest.mark.timeout(120)
@pytest.mark.parametrize("point", ["model.before_provider", "model.after_record"])
async def test_a_model_call_on_a_killed_worker_is_retried_in_seconds(
    point: str,
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    runtime: AgentRuntime,
    settings: Settings,
    task_queue: str,
    tmp_path: Path,
) -> None:
    markers = tmp_path / "markers"
    address = temporal_env.client.service_client.config.target_host
    faulty = pool.spawn(
        worker_env(settings, temporal_address=address, task_queue=task_queue,
                   block_at=point, marker_dir=markers)
    )  # fmt: skip
    run_id = await runtime.start("auto", "what about my order?")
    await wait_for_marker(markers / point, faulty, within=30.0)
    faulty.kill()
    killed = time.monotonic()
    fresh = pool.spawn(worker_env(settings, temporal_address=address, task_queue=task_queue))
    try:
        view = await asyncio.wait_for(runtime.result(run_id), RECOVER_WITHIN)
    except TimeoutError:
        raise AssertionError(
            f"run not finished {RECOVER_WITHIN}s after the kill:\n{fresh.log_tail()}"
        ) from None
    took = time.monotonic() - killed
    print(f"\n{point}: finished on the second worker {took:.1f}s after the kill")
    assert view.status is RunStatus.COMPLETED
    assert view.answer is not None
