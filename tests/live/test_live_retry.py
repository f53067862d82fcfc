"""A model call whose worker is SIGKILLed mid-stream: the next attempt's first publish is a
`retract` of the killed attempt, so a subscriber drops the partial text it showed; then the
new attempt's text, then the committed turn, which is the new attempt's only."""

import asyncio
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.live import LiveDelta
from agentrt.contracts.views import EventView
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from bench.streaming_server import GATE, streaming
from tests.workers._proc import WorkerPool, worker_env
from tests.workers.conftest import pool

__all__ = ["pool"]
PROFILES = Path(__file__).parent / "fixtures" / "retried.yaml"


def shown(items: list[EventView | LiveDelta]) -> str:
    """The text a client shows of the turn: deltas appended, a retract dropping them."""
    text = ""
    for item in items:
        if isinstance(item, LiveDelta):
            text = text + item.text if item.kind == "delta" else ""
    return text


async def test_a_retry_withdraws_the_killed_attempts_partial_output(
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    runtime: AgentRuntime,
    settings: Settings,
    task_queue: str,
) -> None:
    first = ["Half of a first ", "answer ", GATE, "never sent"]
    second = ["The second ", "answer.", 0.5]
    with streaming(first, second) as (server, url):
        env = worker_env(
            settings,
            temporal_address=temporal_env.client.service_client.config.target_host,
            task_queue=task_queue,
        )
        env.update(
            AGENTRT_PROFILES_FILE=str(PROFILES),
            AGENTRT_OPENAI_API_KEY="test-key",
            AGENTRT_OPENAI_BASE_URL=url,
        )
        doomed = pool.spawn(env)
        # Accepted: the run waits in Temporal for the worker process to start.
        run_id = await runtime.start("streamer-retried", "Answer me", wait="accepted")
        items: list[EventView | LiveDelta] = []

        async def collect() -> None:
            async for item in runtime.follow(run_id):
                items.append(item)

        follower = asyncio.create_task(collect())
        for _ in range(600):
            if shown(items) == "Half of a first answer ":
                break
            await asyncio.sleep(0.05)
        assert shown(items) == "Half of a first answer ", doomed.log_tail()
        doomed.kill()  # SIGKILL, mid-stream: the provider is held at the gate
        fresh = pool.spawn(env)
        try:
            await asyncio.wait_for(follower, 90)
        except TimeoutError:
            raise AssertionError(f"the run did not settle:\n{fresh.log_tail()}") from None
    pieces = [i for i in items if isinstance(i, LiveDelta)]
    retracts = [p for p in pieces if p.kind == "retract"]
    assert [(p.attempt, p.sequence) for p in retracts] == [(1, pieces[0].sequence)]
    before = pieces[: pieces.index(retracts[0])]
    assert {p.attempt for p in before} == {1} and "".join(p.text for p in before) == (
        "Half of a first answer "
    )
    after = pieces[pieces.index(retracts[0]) + 1 :]
    assert {p.attempt for p in after} == {2}
    assert shown(items) == "The second answer."
    (turn,) = [i for i in items if isinstance(i, EventView) and i.kind.value == "llm"]
    assert turn.payload["content"] == "The second answer."
    assert len(server.bodies) == 2
    assert (await runtime.status(run_id)).status.value == "COMPLETED"
