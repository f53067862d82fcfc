"""The worker builder: for `agentrt-worker` and for users who run the worker in their own
process with their own toolboxes and model providers.

    worker, resources = build_worker(client, settings, toolboxes=[billing], profiles=[support])
    with resources:
        async with worker:
            await stop.wait()
"""

from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.converter import DataConverter
from temporalio.worker import Interceptor, Worker, WorkerDeploymentConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agentrt.activities.ports import ModelProvider
from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.core.temporal import worker_client
from agentrt.core.tracing import tracing_enabled, tracing_interceptor
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.metrics import ActivityTiming
from agentrt.workers.runner import ContextFreeRunner, ignores_context
from agentrt.workflows.agent_run import AgentRunWorkflow


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
    "agentrt.workflows._approval",
    "agentrt.workflows._budget",
    "agentrt.workflows._calls",
    "agentrt.workflows._context",
    "agentrt.workflows._details",
    "agentrt.workflows._fenced_write",
    "agentrt.workflows._input",
    "agentrt.workflows._loop",
    "agentrt.workflows._options",
    "agentrt.workflows._pauses",
    "agentrt.workflows._settle",
    "agentrt.workflows._steps",
    "agentrt.workflows.agent_run",
)


def sandbox_runner(converter: DataConverter | None = None) -> WorkflowRunner:
    """Pure wire types and the workflow's helpers are shared with the sandbox, so one class
    object crosses it and no run re-imports them (see WORKFLOW_PASSTHROUGH). Given the
    worker's data converter, and when that converter takes no serialization context, the
    SDK's per-payload context questions are answered outside the sandbox (workers.runner)."""
    sandbox = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*WORKFLOW_PASSTHROUGH)
    )
    if converter is not None and ignores_context(converter):
        return ContextFreeRunner(sandbox)
    return sandbox


def deployment_config(settings: Settings) -> WorkerDeploymentConfig | None:
    """Worker versioning when AGENTRT_DEPLOYMENT_NAME and AGENTRT_BUILD_ID are set (a name
    without a build id is a ConfigError): runs stay pinned to the version that began them.
    PINNED is the worker's default rather than on the workflow's defn, because a behavior on
    the defn is refused by the server from unversioned workers (the tests and the demo)."""
    version = settings.deployment_version()
    if version is None:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=version[0], build_id=version[1]),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.PINNED,
    )


def make_worker(client: Client, resources: WorkerResources, settings: Settings) -> Worker:
    client = worker_client(client)  # with payload keys: plaintext payloads are refused
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[AgentRunWorkflow],
        workflow_runner=sandbox_runner(client.data_converter),
        activities=resources.activities,
        # Sync activities (the store's transitions) run on the worker's bounded pool.
        activity_executor=resources.executor,
        interceptors=worker_interceptors(client, resources),
        max_concurrent_activities=settings.max_concurrent_activities,
        max_concurrent_workflow_tasks=settings.max_concurrent_workflow_tasks,
        graceful_shutdown_timeout=timedelta(seconds=settings.graceful_shutdown_seconds),
        # After a worker dies, its cached runs move to another worker after this long.
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=3),
        deployment_config=deployment_config(settings),
    )


def worker_interceptors(client: Client, resources: WorkerResources) -> list[Interceptor]:
    """Activity timing, and tracing when the process traces (core.tracing.tracing_enabled)
    unless the client brings its own (core.temporal.connect does: a client's interceptors
    reach its workers, and two would double every span)."""
    traced = any(isinstance(i, TracingInterceptor) for i in client.config()["interceptors"])
    timing: list[Interceptor] = [ActivityTiming(resources.metrics)]
    if traced or not tracing_enabled():
        return timing
    return [tracing_interceptor(), *timing]
