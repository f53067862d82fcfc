"""A counting proxy in front of a remote agent (real HTTP on 127.0.0.1): every request it
takes is forwarded to the remote as it came and counted, by method and path. Its card is
the remote's with the remote's address replaced by the proxy's (so the client's sends come
through it too). `changed`: the agent changed behind the pin: the card says so (another
description), and every JSON-RPC request is refused with the error agentrt's server gives
a skill it no longer publishes (InvalidParams), nothing forwarded."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentrt.activities.toolbox.remote_http import CARD_PATH
from tests._asgi import on_localhost

HOP = {"host", "content-length", "content-encoding", "transfer-encoding", "connection"}


@dataclass
class Counting:
    upstream: str
    url: str = ""
    changed: bool = False
    requests: list[tuple[str, str]] = field(default_factory=list)

    def sends(self) -> int:
        return sum(1 for method, _ in self.requests if method == "POST")

    def card_fetches(self) -> int:
        return sum(1 for _, path in self.requests if path.endswith(CARD_PATH))


async def _card(proxy: Counting, http: httpx.AsyncClient, request: Request) -> Response:
    reply = await http.get(f"{proxy.upstream}/{CARD_PATH}", headers=_headers(request))
    text = reply.text.replace(proxy.upstream, proxy.url)
    card = json.loads(text)
    if proxy.changed:
        card["description"] = str(card.get("description", "")) + " (changed)"
    return JSONResponse(card, status_code=reply.status_code)


def _headers(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k.lower() not in HOP}


def _app(proxy: Counting, http: httpx.AsyncClient) -> Starlette:
    async def handle(request: Request) -> Response:
        path = request.url.path
        proxy.requests.append((request.method, path))
        if path.endswith(CARD_PATH):
            return await _card(proxy, http, request)
        body = await request.body()
        if proxy.changed and request.method == "POST":
            asked = json.loads(body)
            error = {"code": -32602, "message": "Unknown skill 'quoter'"}
            return JSONResponse({"jsonrpc": "2.0", "id": asked.get("id"), "error": error})
        reply = await http.request(
            request.method, proxy.upstream + path, content=body, headers=_headers(request)
        )
        kept = {k: v for k, v in reply.headers.items() if k.lower() not in HOP}
        return Response(reply.content, status_code=reply.status_code, headers=kept)

    methods = ["GET", "POST", "PUT", "DELETE"]
    return Starlette(routes=[Route("/{path:path}", handle, methods=methods)])


@asynccontextmanager
async def counting_proxy(upstream: str) -> AsyncIterator[Counting]:
    """The proxy in front of `upstream`, served for the block."""
    proxy = Counting(upstream.rstrip("/"))
    async with httpx.AsyncClient(timeout=60) as http:
        async with on_localhost(_app(proxy, http)) as url:
            proxy.url = url
            yield proxy
