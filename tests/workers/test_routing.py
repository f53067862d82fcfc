"""Routing: a toolbox's tools run only on the worker that serves its queue, model calls on
the provider's queue, and a profile's own queue is where its runs start."""

import asyncio
import logging
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from temporalio.api.enums.v1 import EventType, RateLimitSource, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError
from temporalio.worker import Worker

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError, NoWorkerError
from agentrt.contracts.ids import ACT_MODEL_COMPLETE
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore
from agentrt.workers.plugin import AgentrtPlugin


class Points:
    """A fault hook that fails nothing and records which points this worker reached."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, point: str) -> None:
        with self._lock:
            self.seen.append(point)


@asynccontextmanager
async def _serving(client: Client, settings: Settings, points: Points) -> AsyncIterator[list[str]]:
    """A user's own worker: one Worker given only the plugin. The plugin runs the routed
    queues' and the retention pass's workers beside it, by AGENTRT_SERVE."""
    plugin = AgentrtPlugin(settings, faults=points)
    worker = Worker(client, task_queue=settings.temporal.task_queue, plugins=[plugin])
    async with worker:
        yield [worker.task_queue, *plugin.queues()]


def _fleet(settings: Settings, tag: str, **worker: str) -> Settings:
    """A fleet's settings on queues of its own: runs-TAG, models-TAG-<provider> and
    maint-TAG, with `worker` settings on top."""
    return settings.replace(
        temporal={"task_queue": f"runs-{tag}"},
        worker={"model_task_queue": f"models-{tag}", **worker},
        retention={"task_queue": f"maint-{tag}"},
    )


async def _scheduled_queues(client: Client, run_id: str) -> dict[str, set[str]]:
    history = await client.get_workflow_handle(run_id).fetch_history()
    out: dict[str, set[str]] = {}
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = e.activity_task_scheduled_event_attributes
            out.setdefault(attrs.activity_type.name, set()).add(attrs.task_queue.name)
    return out


async def test_tools_run_only_on_the_worker_serving_their_toolbox_queue(
    client: Client, settings: Settings, runs: RunStore
) -> None:
    tag = uuid.uuid4().hex[:8]
    main_q, secure_q, model_prefix = f"runs-{tag}", f"secure-{tag}", f"models-{tag}"
    fleet = _fleet(
        settings, tag, toolbox_queues=f"demo={secure_q}", provider_rate_limits="scripted=50"
    )
    # The general worker knows the demo toolbox's tools (to plan runs) but never runs them.
    general, secure, models = Points(), Points(), Points()
    async with (
        _serving(client, fleet.replace(worker={"serve": "workflows"}), general) as q1,
        _serving(client, fleet.replace(worker={"serve": "toolbox:demo"}), secure) as q2,
        _serving(client, fleet.replace(worker={"serve": "models"}), models) as q3,
    ):
        assert (q1, q2) == ([main_q, f"maint-{tag}"], [secure_q])
        assert f"{model_prefix}-scripted" in q3
        runtime = AgentRuntime(client, runs, main_q)
        done = await runtime.run("auto", "Please refund order 1042")
    assert done.status is RunStatus.COMPLETED
    assert "tool.invoke" in secure.seen
    assert "tool.invoke" not in general.seen and "tool.invoke" not in models.seen
    queues = await _scheduled_queues(client, done.run_id)
    tool_kinds = {name for name, qs in queues.items() if qs == {secure_q}}
    assert tool_kinds, queues  # the read tool and the fenced write both went to the secure queue
    model_kinds = {name for name, qs in queues.items() if qs == {f"{model_prefix}-scripted"}}
    assert model_kinds, queues
    assert all(qs == {main_q} for n, qs in queues.items() if n not in tool_kinds | model_kinds)


PARTITIONS = 4  # the dev server's default per task queue


async def _model_starts(client: Client, run_id: str) -> list[float]:
    """When each model call was taken by a worker (its ActivityTaskStarted event), in s."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    scheduled = {
        e.event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == ACT_MODEL_COMPLETE
    }
    return [
        e.event_time.ToNanoseconds() / 1e9
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        and e.activity_task_started_event_attributes.scheduled_event_id in scheduled
    ]


async def test_a_provider_rate_limit_is_enforced_by_the_server_on_its_model_queue(
    client: Client, settings: Settings, runs: RunStore
) -> None:
    """AGENTRT_PROVIDER_RATE_LIMITS reaches the server as the model queue's rate limit, and
    the server holds the calls to it: sixteen runs started at once, one model call each."""
    tag = uuid.uuid4().hex[:8]
    main_q, model_prefix = f"runs-{tag}", f"models-{tag}"
    model_q = f"{model_prefix}-scripted"
    rate, calls = 4.0, 16
    fleet = _fleet(
        settings, tag, provider_rate_limits=f"scripted={rate:g}", serve="workflows,models"
    )
    async with _serving(client, fleet, Points()) as queues:
        assert model_q in queues
        runtime = AgentRuntime(client, runs, main_q)
        # An unknown prompt gets the scripted default answer: one model call per run.
        views = await asyncio.gather(*(runtime.run("auto", f"hi {i}") for i in range(calls)))
        described = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=model_q),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
                report_config=True,
            )
        )
    assert all(v.status is RunStatus.COMPLETED for v in views)
    limit = described.effective_rate_limit
    assert limit.requests_per_second == pytest.approx(rate)
    assert limit.rate_limit_source == RateLimitSource.RATE_LIMIT_SOURCE_WORKER
    starts = sorted([t for v in views for t in await _model_starts(client, v.run_id)])
    assert len(starts) == calls
    # The server splits the limit over the queue's partitions (four on the dev server),
    # each with a bucket of one: about four go at once (five were seen: a task matched
    # while the limit was being applied), the rest at `rate` overall at most. So the
    # calls beyond PARTITIONS + 2 take at least their count / rate. Unthrottled, sixteen
    # start within about 0.3 s.
    assert starts[-1] - starts[0] >= (calls - PARTITIONS - 2) / rate, starts


async def test_a_profile_starts_on_its_own_queue_and_an_unserved_one_waits_visibly(
    client: Client, runs: RunStore, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    lonely = f"nobody-{uuid.uuid4().hex[:8]}"
    served = load_profiles(settings.worker.profiles_file)
    registry = ProfileRegistry(runs.ctx)
    # A worker registers `support` on its own queue; the suite's registration is put back.
    registry.register([served["support"].model_copy(update={"task_queue": lonely})])
    try:
        await _routed_start_waits_visibly(client, runs, lonely, caplog)
    finally:
        registry.register(served.values())


async def _routed_start_waits_visibly(
    client: Client, runs: RunStore, lonely: str, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = AgentRuntime(client, runs, "agent-runs", begin_timeout=3.0)
    assert await runtime.task_queue_of("support") == lonely
    assert await runtime.task_queue_of("auto") == "agent-runs"
    run_id = str(uuid.uuid4())
    with caplog.at_level(logging.WARNING, logger="agentrt.runtime"):
        starting = asyncio.create_task(
            runtime.start("support", "Please refund order 1042", run_id=run_id)
        )
        # While start waits for a worker, the run is visible in Temporal: running on the
        # profile's queue, no workflow task started.
        handle = client.get_workflow_handle(run_id)
        for _ in range(50):
            try:
                desc = await handle.describe()
                break
            except RPCError:
                await asyncio.sleep(0.05)
        assert desc.status is WorkflowExecutionStatus.RUNNING and desc.task_queue == lonely
        assert desc.raw_description.workflow_execution_info.history_length == 2
        # Nobody begins it within the bound: start says why and withdraws the run.
        with pytest.raises(NoWorkerError, match=lonely):
            await starting
    assert f"no worker polls task queue {lonely!r}" in caplog.text


async def test_a_run_on_a_worker_that_just_started_raises_no_unpolled_warning(
    worker: Worker, runtime: AgentRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    """The demo's case: the worker starts, the run starts at once. Temporal may not list
    the new worker's pollers yet, but the run begins: nothing was waiting, so no warning."""
    with caplog.at_level(logging.WARNING, logger="agentrt.runtime"):
        await runtime.start("auto", "Please refund order 1042")  # returns: the run began
    assert "no worker polls" not in caplog.text


def test_bad_routing_settings_are_one_error(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="AGENTRT_SERVE"):
        settings.replace(worker={"serve": "workflows,gpu"}).worker.serves()
    with pytest.raises(ConfigError, match="AGENTRT_TOOLBOX_QUEUES: bad entry"):
        settings.replace(worker={"toolbox_queues": "demo"}).worker.toolbox_queue_map()
    with pytest.raises(ConfigError, match="not positive"):
        settings.replace(worker={"provider_rate_limits": "openai=0"}).worker.rate_limits()
