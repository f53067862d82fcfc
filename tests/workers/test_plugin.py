"""A user's own worker: a plain `temporalio.worker.Worker` given only `AgentrtPlugin` runs
agent runs end to end on the Temporal dev server, polling with a client that knows nothing
of agentrt (the SDK's default converter): the plugin brings the workflow, the activities,
the converter, the sandbox, the interceptors and the activity executor."""

import json
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from agentrt import AgentrtPlugin, AgentRuntime, Settings, build_worker
from agentrt.contracts.enums import EventKind
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import TOOL_THREAD_PREFIX, WorkerResources
from agentrt.workers.metrics import ActivityTiming
from agentrt.workers.runner import ContextFreeRunner
from agentrt.workflows.agent_run import AgentRunWorkflow
from agentrt.workflows.scheduled import ScheduledFireWorkflow
from tests.workers import _user_toolbox
from tests.workers.test_user_tool_run import booked_once, booking_waits, bookkeeper_settings
from tests.workflows.test_replay import HISTORIES


async def test_a_plain_worker_with_the_plugin_runs_an_agent_end_to_end(
    client: Client, temporal_env: WorkflowEnvironment, settings: Settings, tmp_path
) -> None:
    s = bookkeeper_settings(settings, tmp_path)
    queue = s.temporal.task_queue
    # A client as the SDK makes it: no pydantic converter, no interceptors.
    plain = await Client.connect(
        client.service_client.config.target_host, namespace=client.namespace
    )
    plugin = AgentrtPlugin(s, toolboxes=[_user_toolbox.toolbox])
    worker = Worker(plain, task_queue=queue, plugins=[plugin])

    active = worker.config(active_config=True)
    executor = plugin.resources.executor
    assert isinstance(executor, ThreadPoolExecutor)
    assert active.get("activity_executor") is executor  # sync activities run there
    assert isinstance(active.get("workflow_runner"), ContextFreeRunner)
    assert any(isinstance(i, ActivityTiming) for i in active.get("interceptors", []))
    assert not any(isinstance(i, TracingInterceptor) for i in active.get("interceptors", []))

    async with worker:
        runtime = AgentRuntime(client, RunStore(plugin.resources.ctx), queue)
        waiting = await booking_waits(runtime)
        run_id = waiting.run_id
        booked = await booked_once(runtime, waiting)
        assert booked["thread"].startswith(TOOL_THREAD_PREFIX)  # the plugin's pool
        events = await runtime.events(run_id)
        assert [e.kind for e in events][-1] is EventKind.RUN_COMPLETED

    # The plugin opened the store and the pool; the worker's stop closed them.
    with pytest.raises(RuntimeError, match="shutdown"):
        executor.submit(print)


def test_a_plugin_given_resources_leaves_them_open(settings: Settings) -> None:
    with AgentrtPlugin(settings) as owner:
        borrowed = AgentrtPlugin(settings, resources=owner.resources)
        borrowed.close()
        executor = owner.resources.executor
        assert executor is not None
        assert executor.submit(int, "7").result() == 7
    with pytest.raises(RuntimeError, match="shutdown"):
        executor.submit(int, "7")


async def test_build_workers_worker_runs_sync_activities_on_a_pool_as_large_as_its_limit(
    client: Client, settings: Settings
) -> None:
    s = settings.replace(
        temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
        worker={"max_concurrent_activities": 7},
    )
    # The SDK warns when the executor has fewer threads than the worker runs activities.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        worker, resources = build_worker(client, s)
    assert not [w for w in caught if "max_workers" in str(w.message)]
    with resources:
        active = worker.config(active_config=True)
        assert active.get("activity_executor") is resources.executor
        assert active.get("max_concurrent_activities") == 7
        plugins = active.get("plugins", [])
        assert [type(p) for p in plugins] == [AgentrtPlugin]


async def test_a_replayer_with_the_plugin_replays_a_recorded_history(
    settings: Settings, parts: WorkerResources
) -> None:
    """The plugin gives a Replayer the workflow, the converter and the sandbox too."""
    data = json.loads((HISTORIES / "0.3.1-approved.json").read_text())
    history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
    replayer = Replayer(workflows=[], plugins=[AgentrtPlugin(settings, resources=parts)])
    active = replayer.config(active_config=True)
    # A schedule's fire beside the run (workflows/scheduled.py).
    assert active.get("workflows") == [AgentRunWorkflow, ScheduledFireWorkflow]
    assert isinstance(active.get("workflow_runner"), ContextFreeRunner)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
