"""The worker builder: `AgentrtPlugin`, everything a Temporal Worker needs for agent runs on
the SDK's plugin interface, and `build_worker`, the worker `agentrt-worker` runs.

A user who runs their own worker adds the plugin to it:

    queue = settings.temporal.task_queue
    worker = Worker(client, task_queue=queue, plugins=[AgentrtPlugin(settings)])
    await worker.run()  # the plugin's store and thread pool close when the worker stops
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import timedelta

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import (
    Interceptor,
    ReplayerConfig,
    Worker,
    WorkerConfig,
    WorkerDeploymentConfig,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agentrt.activities.ports import ModelProvider
from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.core.temporal import settings_converter, worker_client
from agentrt.core.tracing import tracing_enabled, tracing_interceptor
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.fastpath import workflow_runner
from agentrt.workers.metrics import ActivityTiming
from agentrt.workers.plaintext import PlaintextStarts
from agentrt.workers.pool import BlockingPool, pool
from agentrt.workflows.agent_run import AgentRunWorkflow


class AgentrtPlugin(SimplePlugin):
    """The agent-run workflow and its activities, the data converter and payload codec, the
    sandbox passthrough, the interceptors and the activity executor, for any Worker (and,
    given to `Client.connect`, the converter for that client and its workers).

    Built from `settings` (plus `toolboxes`, `providers` and `profiles`, as `build_worker`
    takes them), the plugin opens the store and the thread pool at once (a bad toolbox or
    profile is a ConfigError here, before any worker exists) and closes them when the worker
    it runs in
    stops, or on `close()` (`with plugin:`) should no worker run it: one plugin, one worker.
    Given `resources`, it uses them and leaves closing them to the caller (build_worker).

    No workflow failure exception types are added: the run fails through ApplicationError
    (the SDK's default), and any other exception is a bug whose task retries until a fixed
    build replays it."""

    def __init__(
        self,
        settings: Settings,
        *,
        toolboxes: Iterable[Toolbox] = (),
        providers: Mapping[str, ModelProvider] | None = None,
        faults: Callable[[str], None] | None = None,
        profiles: Iterable[Profile] | None = None,
        resources: WorkerResources | None = None,
    ) -> None:
        self.converter = settings_converter(settings)  # a bad AGENTRT_PAYLOAD_KEYS: first
        self.settings = settings
        self.owned = resources is None
        self.resources = resources or build(
            settings, toolboxes=toolboxes, providers=providers, faults=faults, profiles=profiles
        )
        super().__init__(
            "agentrt",
            data_converter=self.converter,  # clients and replayers given the plugin
            workflows=[AgentRunWorkflow],
            activities=self.resources.activities,
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Add agentrt's workflow, activities, client, sandbox, interceptors and executor."""
        config = super().configure_worker(config)
        # A client made for agentrt (core.temporal.connect, or one given this plugin) keeps
        # its converter: it may carry other payload keys than these settings. Any other
        # client cannot read agentrt's payloads; its worker polls with the settings' one.
        # (SDK 1.35.0: SimplePlugin's data_converter reaches clients and replayers, not a
        # worker's client; the Worker reads its converter from config["client"].)
        client = config["client"]
        if client.data_converter.payload_converter_class is not (
            pydantic_data_converter.payload_converter_class
        ):
            own = client.config()
            own["data_converter"] = self.converter
            client = Client(**own)
        # With payload keys: plaintext payloads are refused, and a run whose very start was
        # plaintext is ended with nothing left in Temporal (workers/plaintext.py).
        client = worker_client(client, PlaintextStarts(client).heard)
        config["client"] = client
        fast = self.settings.worker.fast_paths
        config["workflow_runner"] = sandbox_runner(client.data_converter, fast=fast)
        config["interceptors"] = [
            *config.get("interceptors", []),
            *worker_interceptors(client, self.resources),
        ]
        # Sync activities (and sync tools) run on the pool sized to max_concurrent_activities;
        # the async activities' store calls on the store pool (worker_interceptors).
        if config.get("activity_executor") is None:
            config["activity_executor"] = self.resources.executor
        return config

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """Add the workflow and the sandbox the worker runs it in, to replay histories."""
        config = super().configure_replayer(config)
        fast = self.settings.worker.fast_paths
        config["workflow_runner"] = sandbox_runner(config.get("data_converter"), fast=fast)
        return config

    async def run_worker(self, worker: Worker, next: Callable[[Worker], Awaitable[None]]) -> None:
        """Run the worker; when it stops, close what the plugin opened."""
        try:
            await super().run_worker(worker, next)
        finally:
            if self.owned:
                await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Close what the plugin opened (nothing when it was given `resources`)."""
        if self.owned:
            self.resources.close()

    def __enter__(self) -> "AgentrtPlugin":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def build_worker(
    client: Client,
    settings: Settings,
    *,
    toolboxes: Iterable[Toolbox] = (),
    providers: Mapping[str, ModelProvider] | None = None,
    faults: Callable[[str], None] | None = None,
    profiles: Iterable[Profile] | None = None,
) -> tuple[Worker, WorkerResources]:
    """A Temporal Worker for agent runs, and what it holds open (the database engine, the
    sync tools' thread pool): close the resources after the worker has stopped.

    `toolboxes` add to those of AGENTRT_TOOLBOXES and the `agentrt.toolboxes` entry points;
    `providers` add to the configured model providers (`name` of `name:model`); they may
    replace the scripted default names, a clash with any other source is a ConfigError.
    `profiles`, written in Python, are the profiles the worker serves instead of those of
    AGENTRT_PROFILES_FILE."""
    resources = build(
        settings, toolboxes=toolboxes, providers=providers, faults=faults, profiles=profiles
    )
    try:
        return make_worker(client, resources, settings), resources
    except BaseException:
        resources.close()
        raise


# Modules the sandbox shares with the host instead of re-importing them for every run.
# Re-importing is what the sandbox costs: about 30 ms of CPU per run on this project's
# two-core machine before this list (nine modules then, most of them defining dataclasses),
# and each cached run held its own copy of them.
#
# Why each is safe: passing a module through gives up only the sandbox's *import-time*
# isolation; it stays deterministic by what it is.
# - agentrt.contracts: pure wire types (pydantic models, enums, constants). No I/O at
#   import, no module-level mutable state; the workflow only builds new instances.
# - the workflow's helper modules below: pure functions and dataclass/exception
#   definitions over contracts, plus calls into temporalio.workflow (itself passed through;
#   it acts on the current run's event loop, never on module state). At module level they
#   hold only constants and read-only lookup tables (checked: nothing assigns to or
#   mutates them), so sharing them between runs shares nothing a run changes. They do no
#   I/O at import. The bans that keep their code deterministic (datetime.now, uuid4,
#   random, os.environ...) are enforced by workflows/ruff.toml on every file in
#   workflows/, and tests/workflows/test_replay.py replays recorded histories through
#   this runner.
# - agentrt.workflows.agent_run, the workflow class itself: the same. At module level it
#   holds one constant (MAX_REFUSALS_KEPT); each run's state lives on its own instance.
#   Re-importing it was the largest sandbox cost left (about 9% of the worker's CPU in a
#   burst of runs, issue 12).
# - a module added to workflows/ later stays sandboxed until it is listed here: a new
#   module is re-imported (and its module-level code checked by the sandbox) by default.
#   tests/workers/test_builder.py fails until it is listed (or named there as sandboxed).
# The activity-definition modules (agentrt.activities.*) are imported by the workflow
# under workflow.unsafe.imports_passed_through(), so they are already shared.
WORKFLOW_PASSTHROUGH = (
    "agentrt.contracts",
    "agentrt.workflows._calls",
    "agentrt.workflows._context",
    "agentrt.workflows._details",
    "agentrt.workflows._group",
    "agentrt.workflows._loop",
    "agentrt.workflows._options",
    "agentrt.workflows._refs",
    "agentrt.workflows._steps",
    "agentrt.workflows.a2a",
    "agentrt.workflows.agent_run",
    "agentrt.workflows.answers",
    "agentrt.workflows.patches",
    "agentrt.workflows.pauses",
    "agentrt.workflows.gate",
    "agentrt.workflows.pauses_gate",
    "agentrt.workflows.reconciliation",
    "agentrt.workflows.segments",
    "agentrt.workflows.settle",
    "agentrt.workflows.fence",
    "agentrt.workflows.fence_bounds",
)


def sandbox_runner(converter: DataConverter | None = None, *, fast: bool = True) -> WorkflowRunner:
    """Pure wire types and the workflow's helpers are shared with the sandbox, so one class
    object crosses it and no run re-imports them (see WORKFLOW_PASSTHROUGH). Given the
    worker's data converter, and with the fast paths on, the SDK's per-payload context
    questions are answered outside the sandbox where that changes nothing (workers.fastpath)."""
    sandbox = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*WORKFLOW_PASSTHROUGH)
    )
    return workflow_runner(fast, sandbox, converter)


def deployment_config(settings: Settings) -> WorkerDeploymentConfig | None:
    """Worker versioning when AGENTRT_DEPLOYMENT_NAME and AGENTRT_BUILD_ID are set (a name
    without a build id is a ConfigError): runs stay pinned to the version that began them.
    PINNED is the worker's default rather than on the workflow's defn, because a behavior on
    the defn is refused by the server from unversioned workers (the tests and the demo)."""
    version = settings.temporal.deployment_version()
    if version is None:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=version[0], build_id=version[1]),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.PINNED,
    )


def make_worker(client: Client, resources: WorkerResources, settings: Settings) -> Worker:
    """The workflow queue's worker: the plugin over `resources`, with the settings' limits."""
    return Worker(
        client,
        task_queue=settings.temporal.task_queue,
        plugins=[AgentrtPlugin(settings, resources=resources)],
        max_concurrent_activities=settings.worker.max_concurrent_activities,
        max_concurrent_workflow_tasks=settings.worker.max_concurrent_workflow_tasks,
        graceful_shutdown_timeout=timedelta(seconds=settings.worker.graceful_shutdown_seconds),
        # After a worker dies, its cached runs move to another worker after this long.
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=3),
        deployment_config=deployment_config(settings),
    )


def worker_interceptors(client: Client, resources: WorkerResources) -> list[Interceptor]:
    """Activity timing and the store calls' bounded pool (BlockingPool); tracing when the
    process traces (core.tracing.tracing_enabled) unless the client brings its own
    (core.temporal.connect does: a client's interceptors reach its workers, and two would
    double every span)."""
    traced = any(isinstance(i, TracingInterceptor) for i in client.config()["interceptors"])
    timing: list[Interceptor] = [ActivityTiming(resources.metrics), BlockingPool(pool(resources))]
    if traced or not tracing_enabled():
        return timing
    return [tracing_interceptor(), *timing]
