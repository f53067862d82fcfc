"""The fuzz job's check of an HTTP request against a live server (the A2A surfaces,
bench/fuzz_a2a.py; the answers, bench/fuzz_answers.py): no 5xx, no traceback in the
reply, and a rejected request changes no row."""

import time

import httpx
from sqlalchemy import Engine

from bench.fuzz_core import Finding, Verdict, changed, quiesce, snapshot

STREAMING = {"SendStreamingMessage", "SubscribeToTask"}
STREAM_READ_SECONDS = 2.0

Request = tuple[str, str, dict[str, str], bytes | None]  # method, path+query, headers, body


class HttpSurface:
    def __init__(self, base_url: str, engine: Engine) -> None:
        self._http = httpx.Client(base_url=base_url, timeout=httpx.Timeout(40, read=40))
        self._engine = engine
        self._state = snapshot(engine)

    def close(self) -> None:
        self._http.close()

    def rebase(self) -> None:
        """Take the rows as they are now as the baseline (after a change made on purpose)."""
        self._quiesce()

    def _quiesce(self) -> None:
        """After an accepted case, wait until its run stops writing (waiting or ended)."""
        self._state = quiesce(self._engine)

    def check(self, req: Request) -> Verdict:
        method, path, headers, body = req
        streaming = path.endswith((":stream", ":subscribe")) or any(
            f'"method": "{m}"'.encode() in (body or b"") for m in STREAMING
        )
        before = self._state
        status, text = self._send(method, path, headers, body, streaming)
        if status is None:
            self._quiesce()  # a stream still open when we stopped reading: accepted
            return "accepted"
        if status >= 500:
            raise Finding(f"HTTP {status}: {text[:300]}")
        if "Traceback (most recent call last)" in text:
            raise Finding(f"traceback in the reply: {text[:300]}")
        rejected = status >= 400 or text.lstrip().startswith('{"error"') or '"error":' in text[:200]
        if not rejected:
            self._quiesce()
            return "accepted"
        after = snapshot(self._engine)
        diff = changed(before, after)
        if diff:
            self._state = after
            raise Finding(f"rejected (HTTP {status}: {text[:160]}) but state changed: {diff}")
        return "rejected"

    def _send(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None, streaming: bool
    ) -> tuple[int | None, str]:
        if not streaming:
            reply = self._http.request(method, path, headers=headers, content=body)
            return reply.status_code, reply.text
        chunks: list[str] = []
        started = time.monotonic()
        try:
            with self._http.stream(
                method, path, headers=headers, content=body,
                timeout=httpx.Timeout(10, read=STREAM_READ_SECONDS),
            ) as reply:  # fmt: skip
                for chunk in reply.iter_text():
                    chunks.append(chunk)
                    if time.monotonic() - started > STREAM_READ_SECONDS:
                        return None, ""
                return reply.status_code, "".join(chunks)
        except httpx.ReadTimeout:
            return None, ""
