"""A long run's carry (contracts.run.Carry: its plan and progress) is taken only from the
run's own previous segment. A client that starts the workflow itself with a carry would
skip begin's checks and drive a run on a plan of its choosing (here: a write that needs
no approval): the workflow refuses it before any step, and nothing is written."""

import asyncio
import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.messages import Usage
from agentrt.contracts.plan import RunPlan, ToolPlan
from agentrt.contracts.profiles import Timeouts
from agentrt.contracts.run import Carry, RunRequest
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources


async def test_a_carry_in_a_clients_own_start_is_refused(
    client: Client, worker: Worker, task_queue: str, parts: WorkerResources, runs: RunStore
) -> None:
    run_id = str(uuid.uuid4())
    plan = RunPlan(
        profile="support",
        model="scripted:demo",
        max_iterations=5,
        tools=[ToolPlan(name="issue_refund", effect=ToolEffect.NON_IDEMPOTENT_WRITE)],
        privacy="full",
        timeouts=Timeouts(),
        segment_rounds=50,
    )
    forged = Carry(plan=plan, segment=2, next_sequence=1, iterations=0, usage=Usage.none())
    handle = await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(
            run_id=run_id, profile="support", prompt="Please refund order 1042", carry=forged
        ),
        id=run_id,
        task_queue=task_queue,
    )
    with pytest.raises(WorkflowFailureError) as failed:
        await asyncio.wait_for(handle.result(), 30)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidRequest", cause
    assert "previous segment" in cause.message
    assert runs.get(run_id) is None
    assert DemoWorld(parts.ctx).ledger_count(run_id=run_id) == 0
    activities = [
        e
        async for e in handle.fetch_history_events()
        if e.HasField("activity_task_scheduled_event_attributes")
        or e.HasField("marker_recorded_event_attributes")
    ]
    assert activities == []  # no step ran, not even a local one
