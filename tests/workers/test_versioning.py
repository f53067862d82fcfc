"""Worker versioning: runs waiting for approval stay on the version that started them
while a new version, with a changed loop, takes the new runs."""

import uuid
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError
from agentrt.core.deployments import set_current_version
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import deployment_config, make_worker, sandbox_runner
from agentrt.workers.compose import WorkerResources
from tests._built import built
from tests.workers._v2_workflow import AgentRunWorkflowV2
from tests.workflows._waiting import until_status


def _v2_worker(client: Client, parts: WorkerResources, settings: Settings) -> Worker:
    return Worker(
        client,
        task_queue=settings.temporal.task_queue,
        workflows=[AgentRunWorkflowV2],
        workflow_runner=sandbox_runner(),
        activities=parts.activities,
        activity_executor=parts.executor,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=3),
        deployment_config=deployment_config(settings),
    )


async def _build_id(client: Client, run_id: str) -> str:
    desc = await client.get_workflow_handle(run_id).describe()
    return desc.raw_description.workflow_execution_info.versioning_info.deployment_version.build_id


async def _timer_summaries(client: Client, run_id: str) -> list[str]:
    history = await client.get_workflow_handle(run_id).fetch_history()
    return [
        e.user_metadata.summary.data.decode()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]


async def _approve_and_finish(runtime: AgentRuntime, run_id: str) -> None:
    view = await until_status(runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
    assert view.pending_approval is not None
    await runtime.approve(
        run_id, approved=True, decided_by="bob", turn_digest=view.pending_approval.turn_digest
    )
    assert (await runtime.result(run_id)).status is RunStatus.COMPLETED


async def test_waiting_runs_finish_on_their_version_and_new_runs_use_the_next(
    client: Client, parts: WorkerResources, settings: Settings, runs: RunStore
) -> None:
    queue, name = f"tq-{uuid.uuid4().hex[:10]}", f"agentrt-{uuid.uuid4().hex[:8]}"
    v1 = settings.replace(temporal={"task_queue": queue, "deployment_name": name, "build_id": "1"})
    v2 = v1.replace(temporal={"build_id": "2"})
    runtime = AgentRuntime(client, runs, queue)
    async with make_worker(client, parts, v1):
        await set_current_version(client, name, "1")
        old = [(await runtime.run("support", "Please refund order 1042")).run_id for _ in range(2)]
        for run_id in old:
            assert (await runtime.status(run_id)).status is RunStatus.WAITING_FOR_APPROVAL
        async with _v2_worker(client, parts, v2):
            await set_current_version(client, name, "2")
            new = (await runtime.run("support", "Please refund order 1042")).run_id
            for run_id in [*old, new]:
                await _approve_and_finish(runtime, run_id)
    for run_id in old:
        # On v2 the run would have failed replay (the v2 loop starts with a timer).
        assert await _build_id(client, run_id) == "1"
        assert await _timer_summaries(client, run_id) == []
    assert await _build_id(client, new) == "2"
    assert await _timer_summaries(client, new) == ['"v2 loop"']


def test_deployment_name_without_build_id_is_one_error(settings: Settings) -> None:
    bad = settings.replace(temporal={"deployment_name": "agentrt", "build_id": " "})
    with pytest.raises(
        ConfigError, match="AGENTRT_DEPLOYMENT_NAME is set without AGENTRT_BUILD_ID"
    ):
        deployment_config(bad)
    with pytest.raises(ConfigError, match="AGENTRT_BUILD_ID is set without"):
        deployment_config(settings.replace(temporal={"build_id": "7"}))
    assert deployment_config(settings) is None


async def test_a_long_run_keeps_its_version_across_segments(
    client: Client, settings: Settings
) -> None:
    """A run that continues as new stays pinned to the version that started it: the
    segments it continues into after the next version became current run on its own."""
    long = settings.replace(limits={"max_iterations_ceiling": 30, "segment_rounds": 2})
    queue, name = f"tq-{uuid.uuid4().hex[:10]}", f"agentrt-{uuid.uuid4().hex[:8]}"
    v1 = long.replace(temporal={"task_queue": queue, "deployment_name": name, "build_id": "1"})
    v2 = v1.replace(temporal={"build_id": "2"})
    with built(long) as parts:
        runtime = AgentRuntime(client, RunStore(parts.ctx), queue, max_iterations_ceiling=30)
        async with make_worker(client, parts, v1):
            await set_current_version(client, name, "1")
            # The write of round 1 waits for approval; the run goes on past it, and
            # continues as new (rounds 3-4, 5-6) once version 2 is current.
            run_id = (await runtime.run("support", "write then look", max_iterations=10)).run_id
            async with _v2_worker(client, parts, v2):
                await set_current_version(client, name, "2")
                await _approve_and_finish(runtime, run_id)
        segments = await _segments(client, run_id)
    assert len(segments) == 3
    for run in segments:
        handle = client.get_workflow_handle(run_id, run_id=run)
        info = (await handle.describe()).raw_description.workflow_execution_info
        assert info.versioning_info.deployment_version.build_id == "1"
        history = await handle.fetch_history()
        assert not [e for e in history.events if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED]


async def _segments(client: Client, run_id: str) -> list[str]:
    """The run ids of the run's history segments, last first."""
    out: list[str] = []
    run: str | None = (await client.get_workflow_handle(run_id).describe()).run_id
    while run:
        out.append(run)
        events = client.get_workflow_handle(run_id, run_id=run).fetch_history_events()
        first = await anext(aiter(events))
        run = first.workflow_execution_started_event_attributes.continued_execution_run_id
    return out
