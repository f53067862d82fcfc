"""A run that began on an earlier build, with the start marker every run recorded before
workflows/patches.py, goes on on this build as it did: it is asked its later patches, and
records their markers; a run of this build records none (test_agent_run.py,
test_replay.py). Real Temporal, real worker restart between the two builds."""

from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest, RunResult
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import AgentrtPlugin
from agentrt.workers.compose import WorkerResources
from agentrt.workflows.agent_run import AgentRunWorkflow
from agentrt.workflows.fence import LOCAL_STAMP
from agentrt.workflows.patches import STORE_STEPS_V2
from tests.workflows._replay import assert_replays, fetch, patches
from tests.workflows._waiting import decide, until_status


@workflow.defn(name=WORKFLOW_AGENT_RUN, sandboxed=False)
class EarlierBuildRun(AgentRunWorkflow):
    """The run's start as 0.3.1 and every build until this one made it: the start marker
    first, then the run (whose own start, not replaying, asks nothing more)."""

    @workflow.run
    async def run(self, inp: RunRequest) -> RunResult:
        workflow.patched(STORE_STEPS_V2)
        return await super().run(inp)


def _worker(client: Client, parts: WorkerResources, settings: Settings, queue: str) -> Worker:
    plugin = AgentrtPlugin(settings, resources=parts)
    plugin.workflows = [EarlierBuildRun]  # in place of today's AgentRun (SimplePlugin's list)
    # Its cached runs go to the next worker within a second of its stop.
    sticky = timedelta(seconds=1)
    return Worker(
        client, task_queue=queue, plugins=[plugin], sticky_queue_schedule_to_start_timeout=sticky
    )


@pytest.mark.timeout(120)
async def test_a_run_begun_with_markers_is_asked_its_later_patches_here(
    client: Client, parts: WorkerResources, settings: Settings, task_queue: str
) -> None:
    runtime = AgentRuntime(client, RunStore(parts.ctx), task_queue)
    async with _worker(client, parts, settings, task_queue):
        waiting = await runtime.run("support", "Please refund order 1042")
        await until_status(runtime, waiting.run_id, RunStatus.WAITING_FOR_APPROVAL)
    begun = await fetch(client, waiting.run_id)
    assert patches(begun.events) == [STORE_STEPS_V2]
    # Today's worker takes the run over: it replays the start (finding the marker), then
    # writes behind the fence, asking for the local stamp's patch as the run always did.
    today = settings.replace(temporal={"task_queue": task_queue})
    plugin = AgentrtPlugin(today, resources=parts)
    async with Worker(client, task_queue=task_queue, plugins=[plugin]):
        await decide(runtime, waiting, approved=True)
        done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=waiting.run_id) == 1
    history = await fetch(client, waiting.run_id)
    assert patches(history.events) == [STORE_STEPS_V2, LOCAL_STAMP]
    await assert_replays(history)
