"""The A2A server's HTTP surface: the SDK's JSON-RPC, REST and Agent Card routes over our
own handler, behind the bearer-key and body-size guard (api/a2a/guard.py)."""

from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Lifespan

import agentrt.api.a2a.errors  # noqa: F401  (registers RESULT_NOT_RETAINABLE with the SDK)
from agentrt.api.a2a import logs
from agentrt.api.a2a.card import REST_PREFIX, agent_card, with_last_modified, with_skills
from agentrt.api.a2a.guard import CALLER_KEY, Guard
from agentrt.api.a2a.handler import CALLER, A2AHandler
from agentrt.api.settings import ApiSettings
from agentrt.store.db.context import utcnow
from agentrt.store.ops.registry import ProfileRegistry


class CallerContextBuilder(DefaultServerCallContextBuilder):
    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[CALLER] = request.scope.get(CALLER_KEY)
        return context


def a2a_app(
    settings: ApiSettings,
    handler: A2AHandler,
    profiles: ProfileRegistry,
    lifespan: Lifespan[Starlette],
) -> Starlette:
    """The A2A routes over `handler`, guarded; `/healthz` and the card are open."""
    logs.install()

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
    app.add_middleware(
        Guard,
        callers=settings.api.callers(),
        max_body=settings.api.max_body_bytes,
        open_paths={AGENT_CARD_WELL_KNOWN_PATH, "/healthz"},
        rest_prefix=REST_PREFIX,
    )
    return app
