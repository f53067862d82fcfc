"""ASGI guard in front of the A2A routes: bearer API keys and a body limit.

A request without a valid key gets 401 before its body is read; an oversized body gets 413
with a JSON-RPC error. Neither reaches the handler, so neither changes anything.
"""

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrt.api.settings import identify

CALLER_KEY = "agentrt.caller"


async def _reply(send: Send, status: int, body: dict[str, Any], extra: list[Any]) -> None:
    raw = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": raw})


def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class Guard:
    def __init__(
        self, app: ASGIApp, *, callers: dict[str, str], max_body: int, open_paths: set[str]
    ) -> None:
        self._app = app
        self._callers = callers
        self._max_body = max_body
        self._open = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._open:
            await self._app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, key = auth.partition(" ")
        caller = identify(self._callers, key.strip()) if scheme.lower() == "bearer" else None
        if caller is None:
            await _reply(
                send,
                401,
                _rpc_error(-32600, "Unauthorized: a valid bearer API key is required"),
                [(b"www-authenticate", b'Bearer realm="a2a"')],
            )
            return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_body:
            await _reply(send, 413, _rpc_error(-32600, "Payload too large"), [])
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self._max_body:
                await _reply(send, 413, _rpc_error(-32600, "Payload too large"), [])
                return
        scope = {**scope, CALLER_KEY: caller}
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self._app(scope, replay, send)
