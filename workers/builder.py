"""`build_worker`: a Temporal Worker for agent runs with `AgentrtPlugin` (workers/plugin.py),
from settings; and `make_worker`, the workflow queue's worker over resources a caller holds
open (the embedded demo, tests). The sandbox runner, versioning and interceptors live in
workers/worker_config.py; their names are kept here for the callers that import them."""

from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.activities.ports import ModelProvider
from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.workers.compose import WorkerResources
from agentrt.workers.plugin import AgentrtPlugin
from agentrt.workers.worker_config import (
    WORKFLOW_PASSTHROUGH,
    deployment_config,
    sandbox_runner,
    worker_interceptors,
)

__all__ = [
    "WORKFLOW_PASSTHROUGH",
    "AgentrtPlugin",
    "build_worker",
    "deployment_config",
    "make_worker",
    "sandbox_runner",
    "stock_worker",
    "worker_interceptors",
]

# After a worker dies, its cached runs move to another worker after this long.
STICKY_SCHEDULE_TO_START = timedelta(seconds=3)


def stock_worker(client: Client, plugin: AgentrtPlugin) -> Worker:
    """The worker `agentrt-worker` runs: the plugin (the client's, or given here), on the
    settings' task queue."""
    on_client = any(p is plugin for p in client.config().get("plugins", []))
    return Worker(
        client,
        task_queue=plugin.settings.temporal.task_queue,
        plugins=[] if on_client else [plugin],
        sticky_queue_schedule_to_start_timeout=STICKY_SCHEDULE_TO_START,
    )


def build_worker(
    client: Client,
    settings: Settings,
    *,
    toolboxes: Iterable[Toolbox] = (),
    providers: Mapping[str, ModelProvider] | None = None,
    faults: Callable[[str], None] | None = None,
    profiles: Iterable[Profile] | None = None,
) -> tuple[Worker, WorkerResources]:
    """The stock worker for agent runs, `Worker(client, task_queue=..., plugins=[
    AgentrtPlugin(settings, ...)])`, and the plugin's resources (for a store to read runs
    from, `RunStore(resources.ctx)`). The worker opens them when it runs and closes them
    when it stops (closing them again is harmless); it migrates nothing: `agentrt migrate`
    first.

    `toolboxes` add to those of AGENTRT_TOOLBOXES and the `agentrt.toolboxes` entry points;
    `providers` add to the configured model providers (`name` of `name:model`); they may
    replace the scripted default names, a clash with any other source is a ConfigError.
    `profiles`, written in Python, are the profiles the worker serves instead of those of
    AGENTRT_PROFILES_FILE."""
    plugin = AgentrtPlugin(
        settings, toolboxes=toolboxes, providers=providers, faults=faults, profiles=profiles
    )
    return stock_worker(client, plugin), plugin.resources


def make_worker(client: Client, resources: WorkerResources, settings: Settings) -> Worker:
    """The workflow queue's worker over `resources`, open and closed by the caller: the
    plugin given them runs no other worker."""
    return stock_worker(client, AgentrtPlugin(settings, resources=resources))
