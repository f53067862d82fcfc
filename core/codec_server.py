"""The codec server: Temporal Web (and `temporal --codec-endpoint`) POST payloads here to
see them decrypted. It decrypts on request, so bind it to loopback or put it behind auth;
CORS admits only the configured Web UI origins."""

from collections.abc import Iterable

from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.api.common.v1 import Payloads
from temporalio.converter import PayloadCodec


def create_codec_app(codec: PayloadCodec, ui_origins: Iterable[str]) -> Starlette:
    async def _apply(request: Request, decode: bool) -> Response:
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
            )
        ],
    )
