"""Temporal Web's codec, served by the API process and authorised by the operator's session
(issue 28): an operator signed in to the approvals page opens Temporal Web and reads
decoded payloads; no token is pasted anywhere, and nobody else can decode.

Signing in to the approvals page (`POST /me/session`, with the bearer token the page
already holds) sets an HttpOnly, SameSite=Strict cookie scoped to `/codec`. Temporal Web,
configured with this API's `/codec` as its codec endpoint and its codec "include
credentials" setting on, sends that cookie with each `POST /codec/decode`: a cross-origin
request from a configured Web UI origin (AGENTRT_CODEC_UI_ORIGINS; CORS with credentials),
same-site as the API. The session's token must still be active and hold the
`payloads:decode` scope, and the request must name this deployment's namespace. Every
decode, and every refusal, is audited (logger `agentrt.audit`) by principal and namespace.

Sessions live in this process (a restart or another replica asks the page to sign in
again); one lasts as long as its token, at most SESSION_SECONDS; the page's sign-out
ends it (`DELETE /codec/session`). Encoding is not served:
reading needs only decode, and a UI that could encode could forge signals."""

import asyncio
import hmac
import logging
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request as StarletteRequest
from starlette.responses import JSONResponse
from starlette.responses import Response as StarletteResponse
from starlette.routing import Route

from agentrt.api.operator import auth
from agentrt.api.operator.auth import DECODE, Principal
from agentrt.api.operator.state import OpsState
from agentrt.core.codec_server import apply_codec, namespace_refusal
from agentrt.store.principals import PrincipalStore

COOKIE = "agentrt_codec"
CODEC_PATH = "/codec"
SESSION_SECONDS = 8 * 3600
audit = logging.getLogger("agentrt.audit")


@dataclass(frozen=True)
class Session:
    principal: Principal
    expires: float  # time.monotonic()


class CodecSessions:
    """The sessions of this process, by the random id their cookie carries."""

    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}

    def open(self, who: Principal, token_expires: datetime | None) -> tuple[str, int]:
        """A new session for `who`: (its id, its lifetime in seconds)."""
        seconds = SESSION_SECONDS
        if token_expires is not None:
            seconds = min(seconds, int((token_expires - datetime.now(UTC)).total_seconds()))
        now = time.monotonic()
        self._by_id = {k: s for k, s in self._by_id.items() if s.expires > now}  # sweep
        sid = secrets.token_urlsafe(32)
        self._by_id[sid] = Session(who, now + max(seconds, 0))
        return sid, max(seconds, 0)

    def get(self, sid: str) -> Principal | None:
        for key, session in self._by_id.items():
            # Compared in constant time, as a bearer token is.
            if hmac.compare_digest(key.encode(), sid.encode()):
                return session.principal if session.expires > time.monotonic() else None
        return None

    def close(self, sid: str) -> None:
        self._by_id.pop(sid, None)


router = APIRouter()


def _sessions(request: Request) -> CodecSessions:
    sessions: CodecSessions = request.app.state.codec_sessions
    return sessions


@router.post("/me/session", status_code=204, tags=["principals"])
async def open_session(
    request: Request, who: Annotated[Principal, Depends(auth.require(None))]
) -> Response:
    """Sign in for Temporal Web: a cookie for `/codec` only, the page's token stays in the
    page. Any valid token gets one; decoding also needs `payloads:decode`."""
    store: PrincipalStore = request.app.state.ops.principals
    token = next(
        (t for t in await asyncio.to_thread(store.list, who.name) if t.id == who.token_id), None
    )
    sid, seconds = _sessions(request).open(who, None if token is None else token.expires_at)
    reply = Response(status_code=204)
    reply.set_cookie(
        COOKIE, sid, max_age=seconds, path=CODEC_PATH, httponly=True, samesite="strict",
        secure=request.app.state.codec_secure,
    )  # fmt: skip
    return reply


def _refuse(status: int, message: str, namespace: str, who: str) -> StarletteResponse:
    audit.warning(
        "codec decode refused: %s", message,
        extra={"principal": who, "namespace": namespace, "outcome": "refused"},
    )  # fmt: skip
    return JSONResponse({"error": message}, status_code=status)


def codec_app(sessions: CodecSessions, ops: OpsState, origins: Iterable[str]) -> Starlette:
    """The `/codec` sub-app (mounted by api/operator/app.py)."""

    async def decode(request: StarletteRequest) -> StarletteResponse:
        asked = request.path_params.get("namespace") or request.headers.get("x-namespace", "")
        sid = request.cookies.get(COOKIE, "")
        who = sessions.get(sid) if sid else None
        if who is None:
            return _refuse(401, "sign in to the approvals page first", asked, "-")
        if not await asyncio.to_thread(ops.principals.active, who.token_id):
            sessions.close(sid)
            return _refuse(401, "the session's token was revoked or expired", asked, who.name)
        if not who.has(DECODE):
            return _refuse(403, f"{who.name} lacks the scope {DECODE}", asked, who.name)
        client = ops.require_runtime().client
        refusal = namespace_refusal(request, client.namespace)
        if refusal is not None:
            why = "another namespace" if refusal.status_code == 403 else "no namespace named"
            return _refuse(refusal.status_code, why, asked, who.name)
        codec = client.data_converter.payload_codec
        if codec is None:
            return _refuse(409, "no payload keys here: nothing is encrypted", asked, who.name)
        reply = await apply_codec(codec, await request.body())
        audit.info(
            "codec decode by %s in %s", who.name, client.namespace,
            extra={"principal": who.name, "namespace": client.namespace,
                   "outcome": "decoded" if reply.status_code == 200 else "failed"},
        )  # fmt: skip
        return reply

    async def sign_out(request: StarletteRequest) -> StarletteResponse:
        """The approvals page's sign-out: the session ends here, whatever the browser keeps.
        Under /codec, the one path its cookie is sent to."""
        sid = request.cookies.get(COOKIE)
        if sid:
            sessions.close(sid)
        reply = StarletteResponse(status_code=204)
        reply.delete_cookie(COOKIE, path=CODEC_PATH)
        return reply

    return Starlette(
        routes=[
            Route("/session", sign_out, methods=["DELETE"]),
            Route("/decode", decode, methods=["POST"]),
            Route("/{namespace}/decode", decode, methods=["POST"]),
        ],
        middleware=[
            Middleware(
                CORSMiddleware,
                allow_origins=list(origins),
                allow_methods=["POST"],
                allow_headers=["content-type", "x-namespace"],
                allow_credentials=True,
            )
        ],
    )
