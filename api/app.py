"""The web process's one ASGI app, `create_app(settings, client=None)`: the A2A server
(api/a2a/) with the operator API (api/operator/) mounted in front of it, and the MCP
server (api/mcp/) at /mcp, all over one store and one `AgentRuntime`, bound when the app
starts."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.routing import Route
from temporalio.client import Client

from agentrt.api.a2a.app import a2a_app
from agentrt.api.a2a.delivery import PushDelivery
from agentrt.api.a2a.handler import A2AHandler
from agentrt.api.a2a.tasks import TaskService
from agentrt.api.mcp.app import MCP_PATH, McpEndpoint
from agentrt.api.operator.app import mount_ops
from agentrt.api.settings import ApiSettings
from agentrt.api.wake import finish
from agentrt.contracts.errors import ConfigError
from agentrt.core.temporal import connect
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.push import A2APushStore
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.db.context import StoreContext
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore


@dataclass
class ApiState:
    settings: ApiSettings
    engine: Engine
    ctx: StoreContext
    handler: A2AHandler
    delivery: PushDelivery
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    runtime: AgentRuntime | None = None  # bound at start-up


def create_app(settings: ApiSettings, client: Client | None = None) -> Starlette:
    """Build the app; the Temporal client is connected at start-up when not given."""
    try:
        sealer = Sealer.from_b64(settings.read_seal_keys())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    try:
        settings.api.grants()  # parses AGENTRT_API_KEYS too: a bad entry fails here
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    engine, ctx = open_store(
        settings.database.resolved_url(), sealer, run_migrations=settings.api.migrate
    )
    # The profiles the workers registered: where a start goes, what a grant must name,
    # what the Agent Card offers. The API reads no profiles file.
    profiles = ProfileRegistry(ctx)
    store, journal, push = A2AStore(ctx), A2AJournal(ctx), A2APushStore(ctx)
    handler = A2AHandler(settings, _Unbound(), store, journal, push)  # type: ignore[arg-type]
    state = ApiState(settings, engine, ctx, handler, PushDelivery(settings, push, journal))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # The same factory as every other process: with payload keys set, the A2A server
        # encrypts the prompts it starts runs with.
        temporal = client or await connect(settings)
        runtime = state.runtime = AgentRuntime.deployed(temporal, RunStore(ctx), settings)
        handler._tasks = TaskService(settings, store, runtime, profiles)
        stop = asyncio.Event()
        state.tasks.append(asyncio.create_task(state.delivery.run(stop)))
        try:
            async with mcp.running():
                yield
        finally:
            stop.set()
            for task in state.tasks:
                await finish(task, within=5.0)
            engine.dispose()

    app = a2a_app(settings, handler, profiles, lifespan)
    app.state.a2a = state
    outer = mount_ops(app, settings, engine, ctx, profiles)  # the operator API (/runs, /inbox)
    # The MCP server at /mcp, over the operator API's principals and start path; its
    # sessions run for the app's life (the lifespan above, entered once the app starts).
    mcp = outer.state.mcp = McpEndpoint(settings, outer.state.ops)
    outer.router.routes.insert(0, Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"]))
    return outer


class _Unbound:
    def __getattr__(self, name: str) -> object:
        raise RuntimeError("the app has not started (lifespan not run)")


__all__ = ["ApiState", "create_app"]
