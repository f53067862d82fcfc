"""The Temporal Workers that run beside the one given the plugin, by AGENTRT_SERVE: the
retention pass's queue (with the workflows), and the routed queues of model and tool calls,
each with its own concurrency. A provider's request-rate limit is set on its model queue
(`max_task_queue_activities_per_second`): the server enforces it across every worker."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.activities.registry import model_queue_name
from agentrt.activities.retention import RetentionActivities
from agentrt.contracts.errors import ConfigError
from agentrt.core.queue_pollers import Watched
from agentrt.core.settings import Settings
from agentrt.core.temporal import worker_client
from agentrt.store.ops.retention import RetentionStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.executions import TemporalExecutions
from agentrt.workers.pool import BlockingPool, pool
from agentrt.workers.worker_config import deployment_config, sandbox_runner
from agentrt.workflows.retention import RetentionWorkflow


@dataclass(frozen=True)
class RoutedQueue:
    """A queue of routed model or tool calls, and how its worker polls it."""

    task_queue: str
    activities: list[Callable[..., Any]]
    concurrency: int
    rate: float | None = None


def routed_queues(settings: Settings, resources: WorkerResources) -> list[RoutedQueue]:
    """Every routed queue this process serves by AGENTRT_SERVE; a role with nothing to
    serve is a ConfigError (served_tool_queues)."""
    roles = settings.worker.serves()
    out: list[RoutedQueue] = []
    prefix = settings.worker.model_task_queue.strip()
    if "models" in roles and prefix:
        limits = settings.worker.rate_limits()
        for provider in resources.provider_names:
            out.append(
                RoutedQueue(
                    model_queue_name(prefix, provider),
                    resources.model_activities,
                    settings.worker.model_concurrency,
                    limits.get(provider),
                )
            )
    registry = resources.registry

    def has_box(box: str) -> bool:
        return registry is not None and registry.group(box) is not None

    for queue in served_tool_queues(settings, has_box, resources.provider_names):
        out.append(RoutedQueue(queue, resources.tool_activities, settings.worker.tool_concurrency))
    return out


def routed_worker(
    client: Client, settings: Settings, resources: WorkerResources, routed: RoutedQueue
) -> Worker:
    return Worker(
        client,
        task_queue=routed.task_queue,
        activities=routed.activities,
        activity_executor=resources.executor,  # sync activities, as on the workflow queue
        interceptors=[BlockingPool(pool(resources))],  # and the async ones' store calls
        max_concurrent_activities=routed.concurrency or settings.worker.max_concurrent_activities,
        max_task_queue_activities_per_second=routed.rate,
        graceful_shutdown_timeout=timedelta(seconds=settings.worker.graceful_shutdown_seconds),
        deployment_config=deployment_config(settings),
    )


def served_tool_queues(
    settings: Settings, has_toolbox: Callable[[str], bool], providers: Sequence[str]
) -> list[str]:
    """The tool queues this worker polls by AGENTRT_SERVE; a `toolbox:NAME` role whose
    toolbox or queue is missing, or roles that leave nothing to poll, are ConfigErrors.
    (`agentrt-worker --check` asks the same.)"""
    roles = settings.worker.serves()
    tool_queues: list[str] = []
    if "tools" in roles and settings.worker.tool_task_queue.strip():
        tool_queues.append(settings.worker.tool_task_queue.strip())
    boxes = settings.worker.toolbox_queue_map()
    for role in sorted(r for r in roles if r.startswith("toolbox:")):
        box = role.removeprefix("toolbox:")
        if box not in boxes:
            raise ConfigError(f"AGENTRT_SERVE names {role!r}, which AGENTRT_TOOLBOX_QUEUES lacks")
        if not has_toolbox(box):
            raise ConfigError(f"AGENTRT_SERVE names {role!r}, a toolbox this worker lacks")
        tool_queues.append(boxes[box])
    models = "models" in roles and settings.worker.model_task_queue.strip() and providers
    if "workflows" not in roles and not models and not tool_queues:
        raise ConfigError(
            f"AGENTRT_SERVE={settings.worker.serve!r} leaves this worker nothing to poll (set "
            "AGENTRT_MODEL_TASK_QUEUE / AGENTRT_TOOL_TASK_QUEUE for the routed roles)"
        )
    return list(dict.fromkeys(tool_queues))


def watched_queues(settings: Settings, providers: Sequence[str]) -> list[Watched]:
    """The task queues a worker depends on being polled (agentrt_task_queue_pollers): its
    workflow queue, and the queues its runs' model and tool calls are routed to (a routed
    queue nobody polls leaves those calls waiting). Only a worker that runs workflows
    routes calls; one that serves routed queues alone watches nothing."""
    if "workflows" not in settings.worker.serves():
        return []
    watched = [Watched(settings.temporal.task_queue, "workflow")]
    prefix = settings.worker.model_task_queue.strip()
    if prefix:
        watched += [Watched(model_queue_name(prefix, p), "activity") for p in providers]
    if tool_queue := settings.worker.tool_task_queue.strip():
        watched.append(Watched(tool_queue, "activity"))
    watched += [Watched(q, "activity") for q in settings.worker.toolbox_queue_map().values()]
    return sorted(set(watched))


def maintenance_worker(client: Client, resources: WorkerResources, settings: Settings) -> Worker:
    """The retention pass on its own queue: short workflows, unversioned (each pass is new
    and carries no state across deployments)."""
    retention = RetentionActivities(
        store=RetentionStore(resources.ctx), executions=TemporalExecutions(client)
    )
    return Worker(
        worker_client(client),  # with payload keys: plaintext payloads are refused
        task_queue=settings.retention.task_queue,
        workflows=[RetentionWorkflow],
        activities=retention.activities(),
        interceptors=[BlockingPool(pool(resources))],  # its store calls: on the bounded pool
        workflow_runner=sandbox_runner(client.data_converter, fast=settings.worker.fast_paths),
        max_concurrent_activities=4,
        graceful_shutdown_timeout=timedelta(seconds=settings.worker.graceful_shutdown_seconds),
    )


def queues_of(workers: list[Worker]) -> list[str]:
    return [w.task_queue for w in workers]
