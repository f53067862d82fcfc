"""`Server-Timing` (W3C) on a start's answer: how long each of its phases took, so a client
(and the load bench) sees where a slow start's time went: its reads, or Temporal, or
neither (then it waited for the event loop or in the HTTP server, before the handler)."""

import time

from fastapi.responses import Response


class Phases:
    """Phases timed from the handler's start, each written to the header as it ends."""

    def __init__(self, response: Response, token_seconds: float | None = None) -> None:
        """`token_seconds`: how long the auth dependency's token read took, if timed."""
        self._response = response
        self._at = time.perf_counter()
        self._parts: list[str] = []
        if token_seconds is not None:
            self._parts.append(f"token;dur={token_seconds * 1000:.1f}")

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self._parts.append(f"{name};dur={(now - self._at) * 1000:.1f}")
        self._at = now
        self._response.headers["Server-Timing"] = ", ".join(self._parts)
