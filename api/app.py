"""The A2A HTTP app: the SDK's JSON-RPC and Agent Card routes over our own handler, behind
the bearer-key and body-size guard. `create_app(settings, client=None)`.
The operator API (api/ops_app.py) is mounted in front of it."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from temporalio.client import Client

import agentrt.api.errors  # noqa: F401  (registers RESULT_NOT_RETAINABLE with the SDK)
from agentrt.api import logs
from agentrt.api.card import REST_PREFIX, agent_card, with_last_modified, with_skills
from agentrt.api.delivery import PushDelivery
from agentrt.api.guard import CALLER_KEY, Guard
from agentrt.api.handler import CALLER, A2AHandler
from agentrt.api.ops_app import mount_ops
from agentrt.api.ops_wake import finish
from agentrt.api.settings import ApiSettings
from agentrt.api.tasks import TaskService
from agentrt.contracts.errors import ConfigError
from agentrt.core.temporal import connect
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a import A2AStore
from agentrt.store.a2a_journal import A2AJournal
from agentrt.store.a2a_push import A2APushStore
from agentrt.store.context import StoreContext, utcnow
from agentrt.store.open import open_store
from agentrt.store.profile_registry import ProfileRegistry
from agentrt.store.runs import RunStore
from agentrt.store.sealing import Sealer


class CallerContextBuilder(DefaultServerCallContextBuilder):
    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[CALLER] = request.scope.get(CALLER_KEY)
        return context


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
        settings.key_profiles()  # parses AGENTRT_API_KEYS too: a bad entry fails here
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    engine, ctx = open_store(
        settings.resolved_database_url(), sealer, run_migrations=settings.api_migrate
    )
    # The profiles the workers registered: where a start goes, what a grant must name,
    # what the Agent Card offers. The API reads no profiles file.
    profiles = ProfileRegistry(ctx)
    logs.install()
    store, journal, push = A2AStore(ctx), A2AJournal(ctx), A2APushStore(ctx)
    handler = A2AHandler(settings, _Unbound(), store, journal, push)  # type: ignore[arg-type]
    state = ApiState(settings, engine, ctx, handler, PushDelivery(settings, push, journal))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # The same factory as every other process: with payload keys set, the A2A server
        # encrypts the prompts it starts runs with.
        temporal = client or await connect(settings)
        runtime = state.runtime = AgentRuntime(
            temporal,
            RunStore(ctx),
            settings.task_queue,
            begin_timeout=settings.start_timeout_seconds,
            plaintext_refused=temporal.data_converter.payload_codec is None
            and not settings.allow_plaintext_history,
            max_prompt_chars=settings.max_prompt_chars,
        )
        handler._tasks = TaskService(settings, store, temporal, runtime, profiles)
        stop = asyncio.Event()
        state.tasks.append(asyncio.create_task(state.delivery.run(stop)))
        try:
            yield
        finally:
            stop.set()
            for task in state.tasks:
                await finish(task, within=5.0)
            engine.dispose()

    async def healthz(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    routes = [
        *with_last_modified(
            create_agent_card_routes(
                agent_card(settings, profiles.all()),  # the SDK checks it at once
                card_modifier=with_skills(profiles),
                cache_control="public, max-age=300",
            ),
            built=utcnow(),
            registry=profiles,
        ),
        *create_jsonrpc_routes(handler, "/", context_builder=CallerContextBuilder()),
        Route("/healthz", healthz, methods=["GET"]),
        # The REST (HTTP+JSON) binding over the same handler, last: it mounts /{tenant}.
        *create_rest_routes(handler, CallerContextBuilder(), path_prefix=REST_PREFIX),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.a2a = state
    app.add_middleware(
        Guard,
        callers=settings.callers(),
        max_body=settings.api_max_body_bytes,
        open_paths={AGENT_CARD_WELL_KNOWN_PATH, "/healthz"},
        rest_prefix=REST_PREFIX,
    )
    return mount_ops(app, settings, engine, ctx, profiles)  # the operator API (/runs, /inbox)


class _Unbound:
    def __getattr__(self, name: str) -> object:
        raise RuntimeError("the app has not started (lifespan not run)")


__all__ = ["ApiState", "create_app"]
