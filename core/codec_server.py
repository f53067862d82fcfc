"""The codec server: Temporal Web (and `temporal --codec-endpoint --codec-auth`) POST
payloads here to see them decrypted. Decrypting on request is reading every prompt, so each
request must carry `Authorization: Bearer <token>` (compared in constant time); only a
loopback-only dev server may run without one (`token=None`). Encoding is refused to that
token and to none: only workers and clients, with the encode token of their own
(AGENTRT_CODEC_ENCODE_TOKEN), may have a payload made that workers accept. CORS admits only the
configured Web UI origins, and lets their preflights through without a token.

Each request must also name the configured namespace (the `/{namespace}/decode` path the
CLI templates, or the `X-Namespace` header Temporal Web and the CLI send): another
namespace's payloads are not ours to open. Its Host header must be a loopback name or one
the deployment allows (a DNS-rebinding page reaches 127.0.0.1 under its own host name).
Decoding a payload that is not encrypted is a 400 (core/codec.py): nothing plaintext is
passed through as if it had been sealed here, but for the marker data Temporal itself
writes unencoded (`temporal_marker`)."""

import asyncio
import contextlib
import hmac
import json
from collections.abc import AsyncIterator, Iterable, Sequence

import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.converter import PayloadCodec


def _presents(request: Request, token: str | None) -> bool:
    """Whether the request carries `token` as its bearer token (never, for None)."""
    if token is None:
        return False
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    # compare_digest on bytes: constant time in the length of the expected token.
    return scheme.lower() == "bearer" and hmac.compare_digest(
        presented.strip().encode(), token.encode()
    )


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def host_name(header: str) -> str:
    """The host of a Host header without its port: `[::1]:8081` → `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


# What Temporal's SDK core writes into history itself, as plain JSON the payload codec never
# sees: a patch marker's data, and a local activity marker's (its result is encoded). Web
# and the CLI send these to /decode with everything else; they are passed back as they are.
_PATCH_MARKER = frozenset({"id", "deprecated"})
_LOCAL_ACTIVITY_MARKER = frozenset(
    {
        "seq", "attempt", "activity_id", "activity_type", "complete_time", "backoff",
        "original_schedule_time", "activation_index",
    }
)  # fmt: skip
_LOCAL_ACTIVITY_REQUIRED = frozenset({"seq", "activity_id", "activity_type"})


def temporal_marker(p: Payload) -> bool:
    """Whether `p` is marker data of Temporal's own (see above), not a value of ours."""
    if p.metadata.get("encoding") != b"json/plain" or set(p.metadata) != {"encoding"}:
        return False
    try:
        body = json.loads(p.data)
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    keys = set(body)
    if keys == _PATCH_MARKER:
        return isinstance(body["id"], str) and isinstance(body["deprecated"], bool)
    return _LOCAL_ACTIVITY_REQUIRED <= keys <= _LOCAL_ACTIVITY_MARKER and all(
        not isinstance(v, str) or len(v) <= 200 for v in body.values()
    )


def _refused(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def namespace_refusal(request: Request, namespace: str) -> Response | None:
    """None when the request names `namespace` (the X-Namespace header Temporal Web sends,
    or the CLI's /{namespace}/decode path) and nothing else; else the refusal."""
    named = {
        n for n in (request.path_params.get("namespace"), request.headers.get("x-namespace"))
        if n is not None
    }  # fmt: skip
    if not named:
        return _refused(400, "name the namespace: X-Namespace header or /{namespace}/decode")
    if named != {namespace}:
        return _refused(403, "this codec server serves another namespace")
    return None


async def decode_payloads(codec: PayloadCodec, payloads: Sequence[Payload]) -> list[Payload]:
    out: list[Payload] = []
    for p in payloads:
        # Temporal's own marker data is never encoded; it holds no user content.
        out.extend([p] if temporal_marker(p) else await codec.decode([p]))
    return out


async def apply_codec(codec: PayloadCodec, body: bytes, *, decode: bool = True) -> Response:
    """The codec's answer to a Payloads JSON body: decoded (or encoded), or a 400."""
    try:
        payloads = json_format.Parse(body, Payloads())
    except (json_format.ParseError, ValueError):  # ValueError: a body that is not UTF-8
        return JSONResponse({"error": "body is not a Payloads JSON object"}, status_code=400)
    try:
        if decode:
            done = await decode_payloads(codec, payloads.payloads)
        else:
            done = await codec.encode(payloads.payloads)
    except ValueError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    result = Payloads(payloads=done)
    return Response(json_format.MessageToJson(result), media_type="application/json")


class HostCheck:
    """ASGI middleware: a request whose Host is not an allowed name is a 400, before CORS
    or anything else sees it (preflights included)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self._app = app
        self._allowed = frozenset(h.strip().lower().rstrip(".") for h in allowed if h.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = host_name(Headers(scope=scope).get("host", "")).rstrip(".")
            if host not in self._allowed:
                await _refused(400, "this host name is not served here")(scope, receive, send)
                return
        await self._app(scope, receive, send)


def create_codec_app(
    codec: PayloadCodec,
    ui_origins: Iterable[str],
    token: str | None,
    *,
    encode_token: str | None = None,
    namespace: str = "default",
    allowed_hosts: Iterable[str] = (),
) -> Starlette:
    """`token`: what `/decode` needs (None: a loopback dev server, open to decode);
    `encode_token`: the workers' and clients' own, the only one `/encode` takes (it decodes
    too; None: nobody encodes here). Encoding makes a payload the workers accept as ours,
    so the operators' and Temporal Web's token must not: a UI that could encode could
    forge signals. `namespace`: the only one served; `allowed_hosts`: Host names besides
    loopback."""
    for name, value in (("codec token", token), ("codec encode token", encode_token)):
        if value is not None and not value.strip():
            raise ValueError(f"the {name} is empty")

    async def _apply(request: Request, decode: bool) -> Response:
        refusal = _token_refusal(
            request, token, encode_token, encode=not decode
        ) or namespace_refusal(request, namespace)
        if refusal is not None:
            return refusal
        return await apply_codec(codec, await request.body(), decode=decode)

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
        middleware=_middleware(ui_origins, allowed_hosts),
    )


def _token_refusal(
    request: Request, token: str | None, encode_token: str | None, *, encode: bool
) -> Response | None:
    """Why `request` may not encode (or decode): None when its bearer token allows it."""
    if _presents(request, encode_token):
        return None
    if encode:
        if encode_token is None or _presents(request, token):
            return _refused(403, "this codec server encodes only for workers and clients")
    elif token is None or _presents(request, token):
        return None
    return JSONResponse(
        {"error": "a valid bearer token is required"},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="codec"'},
    )


def _middleware(ui_origins: Iterable[str], allowed_hosts: Iterable[str]) -> list[Middleware]:
    return [
        # Outermost: a rebinding page's preflight is refused too.
        Middleware(HostCheck, allowed=[*LOOPBACK_HOSTS, *allowed_hosts]),
        Middleware(
            CORSMiddleware,
            allow_origins=list(ui_origins),
            allow_methods=["POST"],
            allow_headers=["content-type", "x-namespace", "authorization"],
            allow_credentials=True,
        ),
    ]


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
