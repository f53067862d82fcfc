"""The operator API beside the A2A routes, in one ASGI app: FastAPI serves /runs, /inbox,
/me, /openapi.json and the approvals page (/ui/); every other path goes to the A2A app
(with its own key guard). The operator routes authenticate principals by token
(api/operator/auth.py). Every request passes the Host check first (api/hosts.py)."""

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from agentrt.api.body import read_body, replaying
from agentrt.api.hosts import HostCheck, allowed_hosts
from agentrt.api.operator import errors
from agentrt.api.operator.answers import router as answers_router
from agentrt.api.operator.codec import CODEC_PATH, codec_app
from agentrt.api.operator.codec import router as codec_router
from agentrt.api.operator.live_routes import live_router
from agentrt.api.operator.page import mount_page
from agentrt.api.operator.routes import router
from agentrt.api.operator.schedules import schedules_router
from agentrt.api.operator.starts import starts_router
from agentrt.api.operator.state import OpsState
from agentrt.api.settings import ApiSettings
from agentrt.api.text_check import body_problem, url_problem
from agentrt.api.wake import Waker, finish
from agentrt.store.db.context import StoreContext
from agentrt.store.live.bell import LIVE_BELL
from agentrt.store.live.table import LiveStore
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from agentrt.store.security.codec_sessions import CodecSessions
from agentrt.store.security.principals import PrincipalStore

OPS_PREFIXES = ("/runs", "/inbox", "/me", "/schedules")


class BodyLimit:
    """413 with a typed JSON error for an oversized operator request, and 400 for one whose
    path, query or body holds text the store cannot take (api/text_check.py); nothing
    reaches the route, so nothing changes."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self._app, self._max = app, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(OPS_PREFIXES):
            await self._app(scope, receive, send)
            return
        if (problem := url_problem(scope)) is not None:
            await _refused(send, 400, "invalid_request", problem)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max:
            await _too_large(send)
            return
        body = await read_body(receive, self._max)
        if body is None:
            return
        if not isinstance(body, bytes):
            await _too_large(send)
            return
        if (problem := await body_problem(body)) is not None:
            await _refused(send, 400, "invalid_request", problem)
            return
        await self._app(scope, replaying(body, receive), send)


async def _too_large(send: Send) -> None:
    await _refused(send, 413, "payload_too_large", "body too large")


async def _refused(send: Send, status: int, type_: str, message: str) -> None:
    raw = json.dumps({"error": {"type": type_, "message": message}})
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(raw))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw.encode()})


def mount_ops(
    a2a: Starlette,
    settings: ApiSettings,
    engine: Engine,
    ctx: StoreContext,
    profiles: ProfileRegistry,
) -> FastAPI:
    """The outer app: the operator routes, then everything else to `a2a`, whose lifespan
    runs inside this one's."""
    ops = OpsState(
        runs=RunStore(ctx),
        query=RunQuery(ctx),
        principals=PrincipalStore(ctx),
        waker=Waker(settings.api.poll_seconds),
        sealer=ctx.sealer,
        profiles=profiles,
        live=LiveStore(ctx),
    )
    app = FastAPI(
        title="agentrt operator API",
        version="1",
        description="Start, follow, approve and cancel agent runs as an authenticated principal.",
        lifespan=_lifespan(a2a, engine, ops),
        # FastAPI's /docs and /redoc load their scripts from a CDN with no integrity check:
        # off. /openapi.json stays (the schema, no scripts).
        docs_url=None,
        redoc_url=None,
    )
    errors.install(app)
    _mount_routes(app, a2a, settings, ctx, ops)
    app.state.ops = ops
    app.state.a2a = a2a.state.a2a
    a2a.state.a2a.handler.waker = ops.waker  # the A2A streams wake on journal commits too
    app.add_middleware(BodyLimit, max_body=settings.api.max_body_bytes)
    app.add_middleware(HostCheck, allowed=allowed_hosts(settings))  # outermost: first
    return app


def _lifespan(
    a2a: Starlette, engine: Engine, ops: OpsState
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The waker's listener and the live bell for the app's life, around `a2a`'s own."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        stop = asyncio.Event()
        listener = asyncio.create_task(ops.waker.listen(engine, stop))
        try:
            # A worker in this process (embedded, tests) wakes its runs' follows at once,
            # and on SQLite so does one in another process (store/live/wake.py).
            loop = asyncio.get_running_loop()
            with (
                LIVE_BELL.listening(loop, ops.waker.notify, ops.waker.notify_digest),
                ops.live.following(),
            ):
                async with a2a.router.lifespan_context(a2a):
                    ops.runtime = a2a.state.a2a.runtime
                    yield
        finally:
            stop.set()
            ops.start_lane.shutdown(wait=False)
            await finish(listener, within=5.0)

    return lifespan


def _mount_routes(
    app: FastAPI, a2a: Starlette, settings: ApiSettings, ctx: StoreContext, ops: OpsState
) -> None:
    """The operator routers, the page, the codec, then `a2a` for every other path."""
    app.include_router(starts_router)  # POST /runs
    app.include_router(router)
    app.include_router(live_router)
    app.include_router(codec_router)  # POST/DELETE /me/session
    app.include_router(answers_router)  # POST /runs/{id}/answers, and its aliases
    app.include_router(schedules_router)  # /schedules: schedules of runs
    mount_page(app)  # the approvals page at /ui/
    # Temporal Web's codec, authorised by the page's session cookie; sessions are rows,
    # shared by every replica.
    sessions = CodecSessions(ctx)
    app.state.codec_sessions = sessions
    app.state.codec_secure = settings.api.url().startswith("https://")
    app.router.routes.append(
        Mount(CODEC_PATH, app=codec_app(sessions, ops, settings.codec.origins()))
    )
    app.router.routes.append(Mount("/", app=a2a))
