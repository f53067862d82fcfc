"""`GET /runs/{id}/events` as Server-Sent Events: every event after the resume point, each
with `id: <position>` (its place in commit order, migration 0018: not its `sequence`, which
is reserved before the write, so a lower one can commit later) so a reconnect with
`Last-Event-ID` misses nothing and repeats nothing; woken by the
store's commits (NOTIFY) on PostgreSQL, polling on SQLite; ends with `event: end` once the
run is terminal and drained. The token that opened it is checked again every few seconds:
revoked or expired, the stream ends with `event: error` (type `unauthorized`).

`GET /runs/{id}/live` is the same follow with the live output between the events: `delta`
(text of the turn `sequence` as it is written) and `retract` (drop the turn's text shown so
far: a retried or fallen-back call) frames, read from the live table the model worker
writes (store/live/table.py), never through Temporal. Its ids are `<position>:<live id>`, both
resume points. A delta of a turn already committed is not sent: the event has the text.
A resume point handed out before positions existed (a sequence) is taken as a position:
the migration gave every event then stored position = sequence."""

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentrt.api.operator.errors import bad_request
from agentrt.api.operator.feeds import changed
from agentrt.api.operator.state import OpsState
from agentrt.api.operator.views import event_out
from agentrt.api.wake import MAX_SEQUENCE
from agentrt.contracts.views import EventView

KEEPALIVE_SECONDS = 15.0
# A stream asks whether its token is still active this often, waking for it if nothing else
# woke it; with the answer shared for TOKEN_CHECK_SECONDS (state.py) by the token's other
# streams, a revoked token's stream ends within the two together (1.5 s), under 2 s.
TOKEN_RECHECK_SECONDS = 1.0
_BAD_ID = "Last-Event-ID must be an event position"


def _bounded(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise bad_request("bad_last_event_id", _BAD_ID) from None
    if not -1 <= value <= MAX_SEQUENCE:
        raise bad_request("bad_last_event_id", _BAD_ID)
    return value


def resume_after(last_event_id: str | None, after: int) -> int:
    if last_event_id is None or last_event_id.strip() == "":
        return after
    return _bounded(last_event_id)


def resume_live(last_event_id: str | None, after: int, live_after: int) -> tuple[int, int]:
    """The resume points of a live follow: `<position>:<live id>`, else the query's."""
    if last_event_id is None or last_event_id.strip() == "":
        return after, live_after
    events, sep, live = last_event_id.partition(":")
    if not sep:
        raise bad_request("bad_last_event_id", "Last-Event-ID must be <position>:<live id>")
    return _bounded(events), max(0, _bounded(live))


def frame(event: str, data: str, ident: int | str | None = None) -> bytes:
    head = f"id: {ident}\n" if ident is not None else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


@dataclass
class _Cursor:
    """Where a follow stands: the position of the last event sent, the id of the last live
    frame read (a live follow), and the highest sequence of the events sent (or read before
    a resume point): a delta of a turn at or below it is not sent, its turn being stored (a
    model turn begins once the calls before it have their results), as when the cursor was
    that sequence."""

    last: int
    live_last: int | None
    committed: int = -1

    def ident(self) -> int | str:
        return self.last if self.live_last is None else f"{self.last}:{self.live_last}"

    def event_frames(self, batch: list[EventView]) -> list[bytes]:
        out = []
        for e in batch:
            if e.position <= self.last:  # a catch-up read and the buffer may overlap
                continue
            self.last, self.committed = e.position, max(self.committed, e.sequence)
            out.append(frame(e.kind.value, event_out(e).model_dump_json(), self.ident()))
        return out


async def follow(
    state: OpsState, run_id: str, after: int, token_id: str, live_after: int | None = None
) -> AsyncIterator[bytes]:
    """The events after position `after`; with `live_after` (a live follow) the live output
    after that id too. The events come from the run's shared feed (api/operator/feeds.py):
    one poll of the store for all of the run's followers in this process."""
    at = _Cursor(after, live_after)
    sent_at = checked_at = time.monotonic()
    if live_after is not None and after >= 0:
        at.committed = await asyncio.to_thread(state.runs.sequence_upto, run_id, after)
    yield b"retry: 1000\n\n"
    async with state.feeds.join(run_id) as feed:
        while True:
            if time.monotonic() - checked_at >= TOKEN_RECHECK_SECONDS:
                if not await state.tokens.active(token_id):
                    gone = {"type": "unauthorized", "message": "the token was revoked or expired"}
                    yield frame("error", json.dumps({"error": gone}))
                    return
                checked_at = time.monotonic()
            woken = feed.changed  # before reading: a tick after the read is not missed
            sent = False
            if at.live_last is not None:
                # Live first, then events: a turn's deltas always come before its event.
                for d in await asyncio.to_thread(state.live.read, run_id, at.live_last, 500):
                    at.live_last, sent = d.id, True
                    if d.sequence > at.committed:
                        yield frame(d.kind, d.model_dump_json(), at.ident())
            batch, ended = await state.feeds.take(feed, at.last)
            for chunk in at.event_frames(batch):
                yield chunk
            if batch or sent:
                sent_at = time.monotonic()
                continue
            if ended:
                end = {"status": feed.status.value if feed.status else None, "last": at.last}
                yield frame("end", json.dumps(end))
                return
            if time.monotonic() - sent_at > KEEPALIVE_SECONDS:
                yield b": keepalive\n\n"
                sent_at = time.monotonic()
            # Until the feed ticks or the next token check is due, not a fixed wait past it.
            due = checked_at + TOKEN_RECHECK_SECONDS - time.monotonic()
            await changed(woken, max(0.05, due))
