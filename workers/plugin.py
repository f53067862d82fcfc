"""`AgentrtPlugin`: the whole agentrt worker as one Temporal plugin.

A user's own worker:

    plugin = AgentrtPlugin(settings, profiles=[...])
    client = await Client.connect(address, tls=..., plugins=[plugin])
    worker = Worker(client, task_queue=settings.temporal.task_queue)  # the client's plugin
    await worker.run()

(or the plugin given to the Worker alone, `Worker(client, ..., plugins=[plugin])`).

`agentrt-worker` is exactly that (workers/main.py).
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from datetime import timedelta

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.plugin import SimplePlugin
from temporalio.service import ConnectConfig, ServiceClient
from temporalio.worker import ReplayerConfig, Worker, WorkerConfig

from agentrt.activities.ports import ModelProvider
from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.profiles import Profile
from agentrt.core.metrics import serve_metrics, temporal_runtime
from agentrt.core.queue_pollers import watch_queues
from agentrt.core.settings import Settings
from agentrt.core.temporal import settings_converter, worker_client
from agentrt.core.tracing import configure_tracing, shutdown_tracing, tracing_enabled
from agentrt.workers.compose import WorkerResources, compose
from agentrt.workers.fleet import maintenance_worker, routed_queues, routed_worker, watched_queues
from agentrt.workers.mcp_run import ServedMcp
from agentrt.workers.metrics import WorkerMetrics
from agentrt.workers.plaintext import PlaintextStarts
from agentrt.workers.worker_config import deployment_config, sandbox_runner, worker_interceptors
from agentrt.workflows.agent_run import AgentRunWorkflow
from agentrt.workflows.scheduled import ScheduledFireWorkflow

logger = logging.getLogger("workers")


class AgentrtPlugin(SimplePlugin):
    """Everything an agentrt worker is, for any `temporalio` Worker (and Client).

    It holds:

    - the agent-run workflow and its activities, the data converter and payload codec
      (also for a client or replayer given the plugin), the sandbox passthrough (by
      package), the interceptors (timing, the store pool, tracing) and the executor;
    - the worker's limits and, with AGENTRT_DEPLOYMENT_NAME and AGENTRT_BUILD_ID, pinned
      worker versioning (each unset only where the Worker(...) call leaves it unset);
    - while the worker runs: the store (reached, its schema checked, never migrated: a
      schema behind is a SchemaBehindError naming `agentrt migrate`), the profiles'
      registration, the MCP servers of the servers file and of the profiles, the routed
      model and tool queues and the retention pass (each a Worker beside the one given
      the plugin, by AGENTRT_SERVE), the metrics port and the SDK's metrics (a client
      given the plugin), and tracing (AGENTRT_OTLP_ENDPOINT).

    Made, it has read its configuration (a bad toolbox, profile or servers file is a
    ConfigError here) and holds nothing open: the worker's run opens what it needs and
    closes it when the worker stops. One plugin, one worker. Given `resources` (already
    open), it uses them, runs no other worker (`fleet` False) and leaves closing them to
    the caller."""

    def __init__(
        self,
        settings: Settings,
        *,
        toolboxes: Iterable[Toolbox] = (),
        providers: Mapping[str, ModelProvider] | None = None,
        faults: Callable[[str], None] | None = None,
        profiles: Iterable[Profile] | None = None,
        resources: WorkerResources | None = None,
        metrics: WorkerMetrics | None = None,
        fleet: bool | None = None,
    ) -> None:
        self.settings = settings
        self.converter = settings_converter(settings)  # a bad AGENTRT_PAYLOAD_KEYS: first
        self.owned = resources is None
        self.fleet = self.owned if fleet is None else fleet
        self.resources = resources or compose(
            settings, toolboxes=toolboxes, providers=providers, faults=faults,
            profiles=profiles, metrics=metrics,
        )  # fmt: skip
        self.workflows_served = "workflows" in settings.worker.serves()
        self.routed = routed_queues(settings, self.resources) if self.fleet else []
        # A worker that serves routed queues only is the first of them; the rest run beside.
        self.own_queue = None if self.workflows_served or not self.routed else self.routed[0]
        super().__init__(
            "agentrt",
            data_converter=self.converter,  # clients and replayers given the plugin
            workflows=[AgentRunWorkflow, ScheduledFireWorkflow] if self.own_queue is None else None,
            activities=self.resources.activities if self.own_queue is None else None,
        )

    async def connect_service_client(
        self, config: ConnectConfig, next: Callable[[ConnectConfig], Awaitable[ServiceClient]]
    ) -> ServiceClient:
        """Give the connection the SDK metrics runtime the settings ask for."""
        # The SDK's own metrics (AGENTRT_TEMPORAL_METRICS_PORT) are the connection's runtime.
        if config.runtime is None:
            config.runtime = temporal_runtime(self.settings)
        return await next(config)

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Add agentrt's workflow, activities, client, sandbox, interceptors and executor."""
        config = super().configure_worker(config)
        config["client"] = client = self._worker_client(config["client"])
        # The context-free shortcut holds only for workflows that command no other workflow
        # (workers/runner.py): a worker that also hosts the user's (one may run an agent as
        # a child, agentrt.run_agent) keeps the sandbox's own answers.
        # (A schedule's fire starts its run as a child: the runner asks the sandbox for it.)
        own = (AgentRunWorkflow, ScheduledFireWorkflow)
        ours = all(w in own for w in config.get("workflows", []))
        config["workflow_runner"] = sandbox_runner(
            client.data_converter if ours else None, fast=self.settings.worker.fast_paths
        )
        config["interceptors"] = [
            *config.get("interceptors", []),
            *worker_interceptors(client, self.resources, will_trace=self._traces()),
        ]
        # Sync activities (and sync tools) run on the pool sized to max_concurrent_activities;
        # the async activities' store calls on the store pool (worker_interceptors).
        if config.get("activity_executor") is None:
            config["activity_executor"] = self.resources.executor
        self._defaults(config)
        if self.own_queue is not None:
            config["task_queue"] = self.own_queue.task_queue
            config["activities"] = [*config.get("activities", []), *self.own_queue.activities]
            config["max_task_queue_activities_per_second"] = self.own_queue.rate
        return config

    def _traces(self) -> bool:
        """Whether this plugin installs tracing when its worker runs (AGENTRT_OTLP_ENDPOINT;
        a process that has a tracer provider already keeps its own)."""
        return self.owned and bool(self.settings.telemetry.otlp_endpoint.strip())

    def _worker_client(self, client: Client) -> Client:
        # The worker's client, and the one its siblings poll with, without this plugin:
        # given to the client, the SDK applies it to every Worker made on that client, and
        # the routed queues' and retention workers must not get the agent-run workflow.
        own = client.config()
        own["plugins"] = [p for p in own.get("plugins", []) if p is not self]
        # A client made for agentrt (core.temporal.connect, or one given this plugin) keeps
        # its converter: it may carry other payload keys than these settings. Any other
        # client cannot read agentrt's payloads; its worker polls with the settings' one.
        # (SDK 1.35.0: SimplePlugin's data_converter reaches clients and replayers, not a
        # worker's client; the Worker reads its converter from config["client"].)
        if client.data_converter.payload_converter_class is not (
            pydantic_data_converter.payload_converter_class
        ):
            own["data_converter"] = self.converter
        client = Client(**own)
        # With payload keys: plaintext payloads are refused, and a run whose very start was
        # plaintext is ended with nothing left in Temporal (workers/plaintext.py).
        return worker_client(client, PlaintextStarts(client).heard)

    def _defaults(self, config: WorkerConfig) -> None:
        """The settings' limits and versioning, where the Worker(...) call left the SDK's
        defaults (a value it gave wins)."""
        w = self.settings.worker
        if config.get("max_concurrent_activities") is None:
            own = self.own_queue.concurrency if self.own_queue else 0
            config["max_concurrent_activities"] = own or w.max_concurrent_activities
        if config.get("max_concurrent_workflow_tasks") is None:
            config["max_concurrent_workflow_tasks"] = w.max_concurrent_workflow_tasks
        if not config.get("graceful_shutdown_timeout"):
            config["graceful_shutdown_timeout"] = timedelta(seconds=w.graceful_shutdown_seconds)
        if config.get("deployment_config") is None:
            config["deployment_config"] = deployment_config(self.settings)

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """Add the workflow and the sandbox the worker runs it in, to replay histories."""
        config = super().configure_replayer(config)
        config["workflow_runner"] = sandbox_runner(
            config.get("data_converter"), fast=self.settings.worker.fast_paths
        )
        return config

    async def run_worker(self, worker: Worker, next: Callable[[Worker], Awaitable[None]]) -> None:
        """Open what the worker needs, run it beside its sibling workers, close it all after."""
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(self.running(worker))
            except BaseException:
                # SDK 1.35: shutdown() (and `async with worker`'s exit) waits for a run that
                # began; one that never began would leave it waiting forever. Request the
                # shutdown first, so the run begins and ends at once, then raise.
                stopping = asyncio.ensure_future(worker.shutdown())
                with contextlib.suppress(Exception):
                    await next(worker)
                await stopping
                raise
            await next(worker)

    @contextlib.asynccontextmanager
    async def running(self, worker: Worker) -> AsyncIterator[list[Worker]]:
        """What the worker holds while it runs, opened in order and closed in reverse:
        tracing, the store and registration, the MCP servers, the metrics port and the
        workers beside it (yielded)."""
        client = worker.client
        tracer = None
        if self._traces() and not tracing_enabled():
            tracer = configure_tracing(self.settings, "agentrt-worker")
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(shutdown_tracing, tracer)
            if self.owned:  # given resources, the caller opened them and chose their servers
                stack.push_async_callback(asyncio.to_thread, self.resources.close)
                await asyncio.to_thread(self.resources.open)
                mcp = ServedMcp(self.settings, self.resources)
                stack.push_async_callback(mcp.close)
                await mcp.open()
                await stack.enter_async_context(self._metrics(client, mcp))
            beside = self._beside(client)
            for sibling in beside:
                await stack.enter_async_context(sibling)
            polled = ", ".join([worker.task_queue, *(w.task_queue for w in beside)])
            address = client.service_client.config.target_host
            logger.info("worker polling %s on %s%s", polled, address, self._version())
            yield beside

    def _version(self) -> str:
        version = self.settings.temporal.deployment_version()
        return "" if version is None else f" as {version[0]} build {version[1]}"

    def _beside(self, client: Client) -> list[Worker]:
        """The retention pass's worker (with the workflows) and the routed queues' workers,
        on the worker's own client; none without `fleet`."""
        if not self.fleet:
            return []
        out = []
        if self.workflows_served:  # one per client: the SDK refuses two on one queue
            out.append(maintenance_worker(client, self.resources, self.settings))
        rest = self.routed if self.own_queue is None else self.routed[1:]
        out += [routed_worker(client, self.settings, self.resources, r) for r in rest]
        return out

    @contextlib.asynccontextmanager
    async def _metrics(self, client: Client, mcp: ServedMcp) -> AsyncIterator[None]:
        registry = self.resources.metrics.registry
        mcp.gauge(registry)
        watched = watched_queues(self.settings, self.resources.provider_names)
        pollers = watch_queues(registry, client, lambda: watched)
        with serve_metrics(self.settings, registry):
            async with pollers.running():
                yield

    def close(self) -> None:
        """Close what the plugin made, should no worker run it (`with plugin:` does); a
        worker's run closes it itself. Nothing when it was given `resources`."""
        if self.owned:
            self.resources.close()

    def __enter__(self) -> "AgentrtPlugin":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def queues(self) -> list[str]:
        """The task queues this plugin's workers poll, beside the one it is given."""
        rest = self.routed if self.own_queue is None else self.routed[1:]
        retention = [self.settings.retention.task_queue] if self.workflows_served else []
        return [*(retention if self.fleet else []), *(r.task_queue for r in rest)]
