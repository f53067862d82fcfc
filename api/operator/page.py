"""The approvals page: static HTML, CSS and vanilla JS (api/operator/static/, package data) served
at /ui/. No build step, nothing fetched from elsewhere.

The page holds the token in sessionStorage and sends it as a bearer header on every call,
the live event follow included: it reads the SSE endpoint with fetch() streaming rather than
EventSource, so no token ever travels in a URL (where proxies and access logs keep it).
A strict Content-Security-Policy (only this origin's scripts, no inline script, no framing)
and rendering by textContent only keep run data from running as script."""

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

STATIC = Path(__file__).parent / "static"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class PageFiles(StaticFiles):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))  # type: ignore[call-overload]
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await super().__call__(scope, receive, with_headers)  # type: ignore[arg-type]


async def _to_page(_request: object) -> Response:
    return RedirectResponse("/ui/", status_code=307)


def mount_page(app: FastAPI) -> None:
    app.router.routes.append(Route("/ui", _to_page, methods=["GET"]))
    app.mount("/ui", PageFiles(directory=STATIC, html=True), name="ui")
