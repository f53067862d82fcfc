"""Refuse a request whose Host header is not one this server answers to, before anything
else runs: a web page whose DNS name an attacker re-points at 127.0.0.1 (DNS rebinding)
reaches the API with its own name in Host, and is turned away here.

Allowed: the host of AGENTRT_API_PUBLIC_URL, the bind host, every AGENTRT_API_ALLOWED_HOSTS
entry (a name, `*.example.com`, or `*` for any), and 127.0.0.1 / localhost / [::1] when
the server binds a loopback address. Any port. /healthz is open (probes use addresses)."""

import ipaddress
import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from agentrt.api.settings import ApiSettings

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
OPEN_PATHS = frozenset({"/healthz"})


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a Host header, lower-cased, without its port or IPv6 brackets."""
    value = header.strip().lower().rstrip(".")
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(settings: ApiSettings) -> frozenset[str]:
    names = {e.strip().lower().rstrip(".") for e in settings.api.allowed_hosts.split(",")}
    names.add((urlsplit(settings.api.url()).hostname or "").lower())
    if _loopback(settings.api.host):
        names |= LOOPBACK_NAMES
    elif settings.api.host not in ("0.0.0.0", "::"):
        names.add(settings.api.host.lower())
    return frozenset(n for n in names if n and n not in ("0.0.0.0", "::"))


class HostCheck:
    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self._app = app
        self._exact = {h for h in allowed if not h.startswith("*")}
        self._any = "*" in allowed
        self._suffixes = tuple(h[1:] for h in allowed if h.startswith("*."))

    def admits(self, host: str) -> bool:
        return self._any or host in self._exact or (bool(host) and host.endswith(self._suffixes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in OPEN_PATHS:
            await self._app(scope, receive, send)
            return
        raw = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
        if self.admits(host_name(raw)):
            await self._app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps(
            {"error": {"type": "host_not_allowed", "message": "this Host is not served here"}}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 421, "headers": headers})
        await send({"type": "http.response.body", "body": body})
