"""ASGI guard in front of the A2A routes: bearer API keys, JSON bodies only, a body limit.

A request without a valid key gets 401 before its body is read. One that declares a
Content-Type other than JSON (`application/json`, `application/a2a+json`, any `+json`) gets
415, an oversized one 413, one holding too much structure for the SDK's parse on the
event loop 400 (api/a2a/shape.py), each (401 too) in the error shape of its binding
(JSON-RPC, or google.rpc.Status under the REST prefix). None reaches the handler, so none changes
anything. A body with no Content-Type at all is still parsed (and a bad one is -32700).
"""

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from agentrt.api.a2a.shape import shape_problem
from agentrt.api.body import read_body, replaying
from agentrt.api.settings import identify

CALLER_KEY = "agentrt.caller"
BEARER = b'Bearer realm="a2a"'
COMPLEX = "BODY_TOO_COMPLEX"
# (HTTP status, google.rpc status, ErrorInfo reason, message) of each refusal here.
UNAUTHORIZED = (401, "UNAUTHENTICATED", "UNAUTHENTICATED",
                "Unauthorized: a valid bearer API key is required")  # fmt: skip
TOO_LARGE = (413, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE", "Payload too large")
UNSUPPORTED_MEDIA = (415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED",
                     "Content-Type must be application/json or application/a2a+json")  # fmt: skip


def json_media_type(content_type: bytes) -> bool:
    media = content_type.decode("latin-1").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _rest_error(http: int, status: str, reason: str, message: str) -> dict[str, Any]:
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    }
    return {"error": {"code": http, "status": status, "message": message, "details": [info]}}


async def _reply(send: Send, status: int, body: dict[str, Any], extra: list[Any]) -> None:
    raw = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": raw})


def _utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class Guard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        callers: dict[str, str],
        max_body: int,
        open_paths: set[str],
        rest_prefix: str,
    ) -> None:
        self._app = app
        self._callers = callers
        self._max_body = max_body
        self._open = open_paths
        self._rest = rest_prefix

    async def _refuse(
        self, scope: Scope, send: Send, refusal: tuple[int, str, str, str], extra: list[Any]
    ) -> None:
        """`refusal` (HTTP status, google.rpc status, ErrorInfo reason, message) in the error
        shape of the request's binding: google.rpc.Status under the REST prefix, a JSON-RPC
        error (-32600, invalid request) elsewhere."""
        http, status, reason, message = refusal
        if scope["path"].startswith(self._rest):
            body = _rest_error(http, status, reason, message)
        else:
            body = _rpc_error(-32600, message)
        await _reply(send, http, body, extra)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._open:
            await self._app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, key = auth.partition(" ")
        caller = identify(self._callers, key.strip()) if scheme.lower() == "bearer" else None
        if caller is None:
            await self._refuse(scope, send, UNAUTHORIZED, [(b"www-authenticate", BEARER)])
            return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_body:
            await self._refuse(scope, send, TOO_LARGE, [])
            return
        body = await read_body(receive, self._max_body)
        if body is None:
            return
        if not isinstance(body, bytes):
            await self._refuse(scope, send, TOO_LARGE, [])
            return
        declared_type = headers.get(b"content-type")
        if declared_type is not None and not json_media_type(declared_type):
            await self._refuse(scope, send, UNSUPPORTED_MEDIA, [])
            return
        if not scope["path"].startswith(self._rest) and not _utf8(body):
            # JSON is UTF-8: the SDK would answer an InternalError (and log a traceback).
            await _reply(send, 200, _rpc_error(-32700, "Parse error: the body is not UTF-8"), [])
            return
        if (problem := shape_problem(body)) is not None:
            await self._refuse(scope, send, (400, "INVALID_ARGUMENT", COMPLEX, problem), [])
            return
        scope = {**scope, CALLER_KEY: caller}
        await self._app(scope, replaying(body, receive), send)
