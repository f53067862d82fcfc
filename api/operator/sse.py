"""`GET /runs/{id}/events` as Server-Sent Events: every event after the resume point, each
with `id: <sequence>` so a reconnect with `Last-Event-ID` misses nothing; woken by the
store's commits (NOTIFY) on PostgreSQL, polling on SQLite; ends with `event: end` once the
run is terminal and drained. The token that opened it is checked again every few seconds:
revoked or expired, the stream ends with `event: error` (type `unauthorized`)."""

import asyncio
import json
import time
from collections.abc import AsyncIterator

from agentrt.api.operator.errors import bad_request
from agentrt.api.operator.state import OpsState
from agentrt.api.operator.views import event_out
from agentrt.api.wake import MAX_SEQUENCE

KEEPALIVE_SECONDS = 15.0
TOKEN_RECHECK_SECONDS = 2.0


def resume_after(last_event_id: str | None, after: int) -> int:
    if last_event_id is None or last_event_id.strip() == "":
        return after
    try:
        value = int(last_event_id)
    except ValueError:
        raise bad_request("bad_last_event_id", "Last-Event-ID must be an event sequence") from None
    if not -1 <= value <= MAX_SEQUENCE:
        raise bad_request("bad_last_event_id", "Last-Event-ID must be an event sequence")
    return value


def frame(event: str, data: str, ident: int | None = None) -> bytes:
    head = f"id: {ident}\n" if ident is not None else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


async def follow(state: OpsState, run_id: str, after: int, token_id: str) -> AsyncIterator[bytes]:
    last, sent_at = after, time.monotonic()
    checked_at = time.monotonic()
    yield b"retry: 1000\n\n"
    while True:
        if time.monotonic() - checked_at >= TOKEN_RECHECK_SECONDS:
            if not await asyncio.to_thread(state.principals.active, token_id):
                gone = {"type": "unauthorized", "message": "the token was revoked or expired"}
                yield frame("error", json.dumps({"error": gone}))
                return
            checked_at = time.monotonic()
        ticket = state.waker.ticket(run_id)
        batch = await asyncio.to_thread(state.runs.events, run_id, last, 500)
        for e in batch:
            yield frame(e.kind.value, event_out(e).model_dump_json(), e.sequence)
            last = e.sequence
        if batch:
            sent_at = time.monotonic()
            continue
        status = await asyncio.to_thread(state.runs.status, run_id)
        if status is None or status.terminal:
            # The settling event commits with the status: one more read is certain to see it.
            for e in await asyncio.to_thread(state.runs.events, run_id, last, 500):
                yield frame(e.kind.value, event_out(e).model_dump_json(), e.sequence)
                last = e.sequence
            end = {"status": status.value if status else None, "last": last}
            yield frame("end", json.dumps(end))
            return
        if time.monotonic() - sent_at > KEEPALIVE_SECONDS:
            yield b": keepalive\n\n"
            sent_at = time.monotonic()
        await state.waker.wait(run_id, ticket, within=TOKEN_RECHECK_SECONDS)
