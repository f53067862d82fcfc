"""A run's parent link (contracts/agents.py: `parent_run_id`, the tree every view shows) is
taken only from Temporal's own record of who started the run as a child workflow. A client
that starts the workflow itself naming a parent (another initiator's run, say) gets a root
run: no parent on its row or its events, not listed among that run's children, at depth 0."""

import asyncio
import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest, RunResult
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore


async def test_a_parent_named_in_a_clients_own_start_is_not_taken(
    client: Client, worker: Worker, task_queue: str, runtime: AgentRuntime, runs: RunStore
) -> None:
    victim = await runtime.start("support", "What about order 7?")
    assert (await runtime.result(victim)).status is RunStatus.COMPLETED
    run_id = str(uuid.uuid4())
    forged = RunRequest(
        run_id=run_id, profile="support", prompt="What about order 7?",
        parent_run_id=victim, depth=7,
    )  # fmt: skip
    handle = await client.start_workflow(
        WORKFLOW_AGENT_RUN, forged, id=run_id, task_queue=task_queue, result_type=RunResult
    )
    result = await asyncio.wait_for(handle.result(), 30)
    assert result.status is RunStatus.COMPLETED
    view = runs.get(run_id)
    assert view is not None and view.parent_run_id is None
    started = [e for e in runs.events(run_id) if e.kind is EventKind.RUN_STARTED]
    assert "parent_run_id" not in started[0].payload
    assert run_id not in (runs.get(victim) or view).children
