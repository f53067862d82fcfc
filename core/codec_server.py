"""The codec server: Temporal Web (and `temporal --codec-endpoint --codec-auth`) POST
payloads here to see them decrypted. Decrypting on request is reading every prompt, so each
request must carry `Authorization: Bearer <token>` (compared in constant time); only a
loopback-only dev server may run without one (`token=None`). CORS admits only the
configured Web UI origins, and lets their preflights through without a token."""

import asyncio
import contextlib
import hmac
from collections.abc import AsyncIterator, Iterable

import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.api.common.v1 import Payloads
from temporalio.converter import PayloadCodec


def _authorized(request: Request, token: str | None) -> bool:
    if token is None:
        return True
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    # compare_digest on bytes: constant time in the length of the expected token.
    return scheme.lower() == "bearer" and hmac.compare_digest(
        presented.strip().encode(), token.encode()
    )


def create_codec_app(
    codec: PayloadCodec, ui_origins: Iterable[str], token: str | None
) -> Starlette:
    if token is not None and not token.strip():
        raise ValueError("the codec token is empty")

    async def _apply(request: Request, decode: bool) -> Response:
        if not _authorized(request, token):
            return JSONResponse(
                {"error": "a valid bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="codec"'},
            )
        try:
            payloads = json_format.Parse(await request.body(), Payloads())
        except json_format.ParseError:
            return JSONResponse({"error": "body is not a Payloads JSON object"}, status_code=400)
        fn = codec.decode if decode else codec.encode
        try:
            result = Payloads(payloads=await fn(payloads.payloads))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return Response(json_format.MessageToJson(result), media_type="application/json")

    async def decode(request: Request) -> Response:
        return await _apply(request, decode=True)

    async def encode(request: Request) -> Response:
        return await _apply(request, decode=False)

    return Starlette(
        routes=[
            Route("/decode", decode, methods=["POST"]),
            Route("/encode", encode, methods=["POST"]),
            # The CLI form: /{namespace}/decode
            Route("/{namespace}/decode", decode, methods=["POST"]),
            Route("/{namespace}/encode", encode, methods=["POST"]),
        ],
        middleware=[
            Middleware(
                CORSMiddleware,
                allow_origins=list(ui_origins),
                allow_methods=["POST"],
                allow_headers=["content-type", "x-namespace", "authorization"],
                allow_credentials=True,
            )
        ],
    )


def ui_origins(ui_port: int) -> list[str]:
    """The origins a Temporal Web UI on this loopback port sends."""
    return [f"http://127.0.0.1:{ui_port}", f"http://localhost:{ui_port}"]


@contextlib.asynccontextmanager
async def serving(app: Starlette, port: int) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1:`port` in this event loop; yields its URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):  # bounded wait for the listener
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if not server.started:
            raise RuntimeError(f"the codec server did not start on 127.0.0.1:{port}")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
