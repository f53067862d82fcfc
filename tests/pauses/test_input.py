"""The input pause: two follow-ups for one pause, delivered together, record one and refuse
the other; the run goes on."""

import asyncio
import uuid

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import UPDATE_SUBMIT_INPUT
from agentrt.core.settings import Settings
from agentrt.starter._inputs import attested_input
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests.workflows._tasks import new_a2a_task, start_for_task
from tests.workflows._waiting import until_admitted, until_status


async def test_two_follow_ups_in_one_pause_record_one_and_refuse_the_other(
    client: Client, parts: WorkerResources, settings: Settings, runs: RunStore
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    runtime = AgentRuntime(client, runs, queue)
    served = settings.replace(temporal={"task_queue": queue})
    task_id, run_id = await new_a2a_task(parts, owner="t")
    async with make_worker(client, parts, served):
        await start_for_task(runtime, task_id, run_id)
        await until_status(runtime, run_id, RunStatus.WAITING_FOR_INPUT)
    # No worker now: both updates wait at the server and reach the next one together.
    handle = client.get_workflow_handle(run_id)
    sent = [
        asyncio.create_task(
            handle.execute_update(
                UPDATE_SUBMIT_INPUT,
                attested_input(runs.sealer, run_id, message_id=m, text="order 1042", sent_by="t"),
                id=f"input-{m}",
            )
        )
        for m in ("m2", "m3")
    ]
    # Both are held by the server (admitted) before a worker polls again; with none
    # polling, neither can have an answer.
    for m in ("m2", "m3"):
        await until_admitted(client, run_id, f"input-{m}")
    assert not any(t.done() for t in sent)
    async with make_worker(client, parts, served):
        outcomes = await asyncio.wait_for(asyncio.gather(*sent, return_exceptions=True), 60)
        done = await asyncio.wait_for(runtime.result(run_id), 60)
    refused = [o for o in outcomes if isinstance(o, WorkflowUpdateFailedError)]
    assert outcomes.count(None) == 1 and len(refused) == 1, outcomes
    cause = refused[0].cause
    assert isinstance(cause, ApplicationError) and cause.type == ErrorType.NOT_AWAITING_INPUT.value
    assert done.status is RunStatus.COMPLETED and done.answer == "Thanks: order noted, all is well."
