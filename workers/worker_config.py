"""How a worker is configured for agent runs, whichever builds it (the plugin, the routed
queues' workers, the replayer): the sandbox runner and its passthrough, worker
versioning and the interceptors."""

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.converter import DataConverter
from temporalio.worker import Interceptor, WorkerDeploymentConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agentrt.core.settings import Settings
from agentrt.core.tracing import tracing_enabled, tracing_interceptor
from agentrt.workers.compose import WorkerResources
from agentrt.workers.fastpath import workflow_runner
from agentrt.workers.metrics import ActivityTiming
from agentrt.workers.pool import BlockingPool, pool

# Modules the sandbox shares with the host instead of re-importing them for every run.
# Re-importing is what the sandbox costs: about 30 ms of CPU per run on this project's
# two-core machine before this list (nine modules then, most of them defining dataclasses),
# and each cached run held its own copy of them.
#
# Why each is safe: passing a module through gives up only the sandbox's *import-time*
# isolation; it stays deterministic by what it is.
# - agentrt.contracts: pure wire types (pydantic models, enums, constants). No I/O at
#   import, no module-level mutable state; the workflow only builds new instances.
# - agentrt.workflows, the workflow classes and their helper modules: pure functions and
#   dataclass/exception definitions over contracts, plus calls into temporalio.workflow
#   (itself passed through; it acts on the current run's event loop, never on module
#   state). At module level they
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
# - a module added to workflows/ later is passed through with its package (the prefix
#   covers every submodule): what keeps it safe is what keeps the others safe, the
#   workflows/ruff.toml bans and the replay tests, and tests/workers/test_builder.py
#   checks that no module of the package keeps mutable state at module level.
# The activity-definition modules (agentrt.activities.*) are imported by the workflow
# under workflow.unsafe.imports_passed_through(), so they are already shared.
# By package prefix: the SDK passes a listed module and every submodule of it through.
WORKFLOW_PASSTHROUGH = ("agentrt.contracts", "agentrt.workflows")


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


def worker_interceptors(
    client: Client, resources: WorkerResources, *, will_trace: bool = False
) -> list[Interceptor]:
    """Activity timing and the store calls' bounded pool (BlockingPool); tracing when the
    process traces (core.tracing.tracing_enabled), or `will_trace` (the plugin installs a
    tracer provider when the worker runs), unless the client brings its own
    (core.temporal.connect does: a client's interceptors reach its workers, and two would
    double every span)."""
    traced = any(isinstance(i, TracingInterceptor) for i in client.config()["interceptors"])
    timing: list[Interceptor] = [ActivityTiming(resources.metrics), BlockingPool(pool(resources))]
    if traced or not (will_trace or tracing_enabled()):
        return timing
    return [tracing_interceptor(), *timing]
