"""Recovery in seconds: a worker SIGKILLed in the middle of a model call.

Before heartbeats, the call that was running on the dead worker waited out its whole
start-to-close timeout (120 s) before Temporal retried it. Now the model activity heartbeats
while it runs, and a missed heartbeat (5 s) hands the call to another worker.
"""

import asyncio
import time

import pytest

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.profiles import Timeouts
from agentrt.starter.facade import AgentRuntime
from tests.workers._proc import Arm

# Heartbeat timeout (5 s) + retry interval (1 s) + the dead worker's sticky queue (3 s),
# with room for a loaded machine: far below the model's start-to-close timeout.
RECOVER_WITHIN = 30.0
assert RECOVER_WITHIN < Timeouts().model_seconds / 3


@pytest.mark.timeout(120)
@pytest.mark.parametrize("point", ["model.before_provider", "model.after_record"])
async def test_a_model_call_on_a_killed_worker_is_retried_in_seconds(
    point: str, arm: Arm, runtime: AgentRuntime
) -> None:
    faulty = arm(point)
    run_id = await runtime.start("auto", "what about my order?")
    await faulty.reached()
    faulty.worker.kill()
    killed = time.monotonic()
    fresh = faulty.successor()
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
