"""What a built worker holds open besides the Temporal Worker (workers/compose.py builds
it): the engine and store, the thread pools, the activities by queue, the tool registry,
the profiles' registration, and what waits for the worker to run (MCP servers, remote
agents)."""

from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from agentrt.activities.ports import Tool
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.toolbox.mcp_config import McpServer
from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.contracts.profiles import Profile
from agentrt.store.db.context import StoreContext
from agentrt.store.db.open import check_worker_store
from agentrt.store.ops.registry import ProfileRegistry, Registration
from agentrt.workers.call_metrics import MeteredTool
from agentrt.workers.metrics import CallMetrics, WorkerMetrics
from agentrt.workers.tracing import TracedTool


def pooled_connections(engine: Engine) -> int:
    """How many connections the engine's pool keeps open (its overflow is opened and
    closed again on demand: a connection each time, a new backend on PostgreSQL)."""
    size = getattr(engine.pool, "size", None)
    return max(1, size()) if callable(size) else 4


@dataclass
class WorkerResources:
    """What a built worker holds open besides the Temporal Worker; close it once the worker
    has stopped (`with resources:` does)."""

    engine: Engine
    ctx: StoreContext
    activities: list[Callable[..., Any]] = field(default_factory=list)
    executor: ThreadPoolExecutor | None = None  # where sync tools run
    # Where the async activities' store calls run (workers/pool.py): no more threads than
    # the store has pooled connections, so a burst never opens and closes connections.
    store_executor: Executor | None = None
    registry: ToolRegistry | None = None
    metrics: WorkerMetrics = field(default_factory=WorkerMetrics.create)  # serve .registry
    # For workers that serve only model or tool queues (workers/fleet.py).
    model_activities: list[Callable[..., Any]] = field(default_factory=list)
    tool_activities: list[Callable[..., Any]] = field(default_factory=list)
    provider_names: list[str] = field(default_factory=list)
    profile_names: list[str] = field(default_factory=list)  # the profiles this worker serves
    # The profiles this worker serves, registered for clients to route by from open() until
    # close(); the catalog resolves their tools.
    registration: Registration | None = None
    catalog: ProfileCatalog | None = None
    served: list[Profile] = field(default_factory=list)
    # The MCP servers of the servers file and the profiles: toolboxes pending until the
    # worker runs and lists them (workers/plugin.py).
    mcp_servers: list[McpServer] = field(default_factory=list)
    # The remote A2A agents, pending alike until their cards are fetched.
    remote_agents: list[RemoteAgent] = field(default_factory=list)
    payload_keys: list[str] = field(default_factory=list)

    def open(self) -> None:
        """The worker's start (blocking I/O): the database reached, its schema at head
        (SchemaBehindError names `agentrt migrate` otherwise), the profiles registered."""
        check_worker_store(self.engine)
        if self.registration is None:
            catalog = self.catalog
            reach = {p.name: catalog.reach(p.name) for p in self.served} if catalog else None
            self.registration = Registration(
                ProfileRegistry(self.ctx), self.served, payload_keys=self.payload_keys,
                reach=reach,
            )  # fmt: skip

    def close(self) -> None:
        if self.registration is not None:
            self.registration.close()
        for pool in (self.executor, self.store_executor):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self.engine.dispose()

    def add_tools(self, group: str, tools: Iterable[Tool]) -> None:
        """A toolbox pending at start (an MCP server that was down) now lists its tools:
        wrapped as the ones registered at start, then offered to runs that begin from now."""
        assert self.registry is not None
        self.registry.add_group(group, wrapped(group, tools, self.metrics.calls))
        if self.registration is not None and self.catalog is not None:
            # Its tools' effects are known now: what the profiles may do, registered again.
            catalog = self.catalog
            self.registration.renew({p.name: catalog.reach(p.name) for p in self.served})

    def __enter__(self) -> "WorkerResources":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def wrapped(group: str, tools: Iterable[Tool], calls: CallMetrics) -> list[Tool]:
    """Each tool as the worker registers it: traced, and counted by toolbox and name."""
    return [TracedTool(MeteredTool(group, t, calls)) for t in tools]
