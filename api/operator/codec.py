"""Temporal Web's codec, served by the API process and authorised by the operator's session
(issue 28): an operator signed in to the approvals page opens Temporal Web and reads the
payloads of the runs they may read, decoded as far as each run's privacy level allows
(api/operator/codec_access.py, issue 41); no token is pasted anywhere.

Signing in to the approvals page (`POST /me/session`, with the bearer token the page
already holds) sets an HttpOnly, SameSite=Strict cookie scoped to `/codec`. Temporal Web,
configured with this API's `/codec` as its codec endpoint and its codec "include
credentials" setting on, sends that cookie with each `POST /codec/decode`: a cross-origin
request from a configured Web UI origin (AGENTRT_CODEC_UI_ORIGINS; CORS with credentials),
same-site as the API. The session's token must still be active and hold the
`payloads:decode` scope, and the request must name this deployment's namespace. Every
decode, and every refusal, is audited (logger `agentrt.audit`) by principal and namespace.

Sessions live in the database (store/security/codec_sessions.py), so every API replica knows them
and a sign-out on one (`DELETE /codec/session`) ends the session on all; one lasts as long
as its token, at most SESSION_SECONDS. Encoding is not served: reading needs only decode,
and a UI that could encode could forge signals."""

import asyncio
import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request as StarletteRequest
from starlette.responses import JSONResponse
from starlette.responses import Response as StarletteResponse
from starlette.routing import Route
from temporalio.api.common.v1 import Payloads
from temporalio.converter import PayloadCodec

from agentrt.api.grants import Grants
from agentrt.api.operator import auth
from agentrt.api.operator.auth import ADMIN, DECODE, Principal
from agentrt.api.operator.codec_access import decode_for
from agentrt.api.operator.state import OpsState
from agentrt.core.codec_server import namespace_refusal
from agentrt.store.security.codec_sessions import CodecSessions
from agentrt.store.security.principals import PrincipalStore, TokenInfo

COOKIE = "agentrt_codec"
CODEC_PATH = "/codec"
SESSION_SECONDS = 8 * 3600
audit = logging.getLogger("agentrt.audit")

router = APIRouter()


def _sessions(request: Request) -> CodecSessions:
    sessions: CodecSessions = request.app.state.codec_sessions
    return sessions


def _lifetime(token: TokenInfo) -> int:
    seconds = SESSION_SECONDS
    if token.expires_at is not None:
        seconds = min(seconds, int((token.expires_at - datetime.now(UTC)).total_seconds()))
    return max(seconds, 0)


@router.post("/me/session", status_code=204, tags=["principals"])
async def open_session(request: Request, who: auth.Anyone) -> Response:
    """Sign in for Temporal Web: a cookie for `/codec` only, the page's token stays in the
    page. Any valid token gets one; decoding also needs `payloads:decode`."""
    store: PrincipalStore = request.app.state.ops.principals
    token = next(
        (t for t in await asyncio.to_thread(store.list, who.name) if t.id == who.token_id), None
    )
    if token is None:  # revoked between its check and this read
        return Response(status_code=401)
    seconds = _lifetime(token)
    sid = await asyncio.to_thread(_sessions(request).open, token, timedelta(seconds=seconds))
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


def _principal(token: TokenInfo) -> Principal:
    grants = Grants.of(token.profiles, everything=ADMIN in token.scopes)
    return Principal(token.principal, token.scopes, grants, token.id)


def codec_app(sessions: CodecSessions, ops: OpsState, origins: Iterable[str]) -> Starlette:
    """The `/codec` sub-app (mounted by api/operator/app.py)."""

    async def decode(request: StarletteRequest) -> StarletteResponse:
        asked = request.path_params.get("namespace") or request.headers.get("x-namespace", "")
        sid = request.cookies.get(COOKIE, "")
        token = await asyncio.to_thread(sessions.token, sid) if sid else None
        if token is None:
            why = "sign in to the approvals page first" if not sid else (
                "the session ended, or its token was revoked or expired: sign in again"
            )  # fmt: skip
            return _refuse(401, why, asked, "-")
        who = _principal(token)
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
        return await _decoded(request, who, codec, ops, client.namespace)

    async def sign_out(request: StarletteRequest) -> StarletteResponse:
        """The approvals page's sign-out: the session ends on every replica, whatever the
        browser keeps. Under /codec, the one path its cookie is sent to."""
        sid = request.cookies.get(COOKIE)
        if sid:
            await asyncio.to_thread(sessions.end, sid)
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


async def _decoded(
    request: StarletteRequest, who: Principal, codec: PayloadCodec, ops: OpsState, namespace: str
) -> StarletteResponse:
    try:
        payloads = json_format.Parse(await request.body(), Payloads())
    except (json_format.ParseError, ValueError):  # ValueError: a body that is not UTF-8
        return _refuse(400, "body is not a Payloads JSON object", namespace, who.name)
    try:
        shown = await decode_for(who, codec, payloads.payloads, ops.query)
    except ValueError as exc:
        audit.info(
            "codec decode by %s in %s failed", who.name, namespace,
            extra={"principal": who.name, "namespace": namespace, "outcome": "failed"},
        )  # fmt: skip
        return JSONResponse({"error": str(exc)}, status_code=400)
    audit.info(
        "codec decode by %s in %s: %s", who.name, namespace, dict(shown.outcomes),
        extra={"principal": who.name, "namespace": namespace, "runs": sorted(shown.runs),
               "outcome": "decoded" if shown.runs else "withheld"},
    )  # fmt: skip
    body = json_format.MessageToJson(Payloads(payloads=shown.payloads))
    return StarletteResponse(body, media_type="application/json")
