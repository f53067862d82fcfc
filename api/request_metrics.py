"""HTTP metrics of the web process (operator API, approvals page, A2A): requests by method,
route template and status, and their latency. The route is the template that served the
request (`/runs/{run_id}`): the route the router chose (Starlette leaves it in the scope),
else the one a walk of the app's routes finds (a request refused before routing, a 405),
so a run id, a task id, a token or any other path text never becomes a label; a path no
route matches is `unmatched`. Measured outermost, so refusals (421, 401, 413) count too."""

import time
from collections.abc import Iterable, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# Up to the response's headers: a live follow (SSE) is open for minutes, its start is fast.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
UNMATCHED = "unmatched"


class RequestMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "agentrt_api_requests",
            "HTTP requests, by method, route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.seconds = Histogram(
            "agentrt_api_request_seconds",
            "HTTP request latency up to the response's headers, by method and route template.",
            ["method", "route"],
            buckets=BUCKETS,
            registry=registry,
        )


def route_template(routes: Sequence[BaseRoute], scope: Scope, prefix: str = "") -> str | None:
    """The template of the route that serves `scope`, through mounts; None when none does.
    A method mismatch (PARTIAL) still names the route: its 405 belongs to it."""
    partial: str | None = None
    for route in routes:
        path = getattr(route, "path", None)
        if not isinstance(path, str):
            continue  # a kind of route without a template of its own (FastAPI's includes)
        match, child = route.matches(scope)
        if match is Match.NONE:
            continue
        if isinstance(route, Mount):
            inner = route.routes
            if not inner:  # an app mounted whole (the page's static files)
                return f"{prefix}{path}/{{path}}"
            found = route_template(inner, {**scope, **child}, prefix + path)
            if found is not None:
                return found
            continue
        if match is Match.FULL:
            return prefix + path
        partial = partial or prefix + path
    return partial


class MeasuredApp:
    """ASGI middleware: one count and one latency per HTTP request."""

    def __init__(self, app: ASGIApp, metrics: RequestMetrics, routes: Iterable[BaseRoute]):
        self._app, self._metrics = app, metrics
        self._routes = list(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        method = scope.get("method", "")
        method = method if method in METHODS else "OTHER"
        walked = _safe_template(self._routes, scope)
        started = time.monotonic()
        status: list[int] = []
        route: list[str] = []

        def chosen() -> str:
            # The scope is the one the routers update: after routing it names the route.
            if not route:
                served = getattr(scope.get("route"), "path", None)
                route.append(served if isinstance(served, str) and served else walked)
            return route[0]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and not status:
                status.append(int(message["status"]))
                self._metrics.seconds.labels(method=method, route=chosen()).observe(
                    time.monotonic() - started
                )
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            self._metrics.requests.labels(
                method=method, route=chosen(), status=str(status[0] if status else 500)
            ).inc()


def _safe_template(routes: Sequence[BaseRoute], scope: Scope) -> str:
    try:
        found = route_template(routes, dict(scope))
    except Exception:  # a malformed path must not fail the request in the metrics
        found = None
    return found or UNMATCHED


def instrument(app: Any, metrics: RequestMetrics) -> None:
    """Measure every request to `app` (a Starlette or FastAPI app, before it starts)."""
    app.add_middleware(MeasuredApp, metrics=metrics, routes=app.router.routes)
