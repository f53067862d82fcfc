"""SSE streams read only the journal: first the Task as the journal tells it, then every
journal event in order. A client that reconnects with `Last-Event-ID: <sequence>` (each
event carries its `sequence` in its metadata) gets the snapshot at that position and then
everything after it, so it misses nothing."""

import asyncio
from collections.abc import AsyncIterator

from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from agentrt.api.a2a.convert import Event, event_proto, task_from_dict
from agentrt.api.wake import MAX_SEQUENCE, Waker
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.view import INTERRUPTED, TERMINAL

RESUME_HEADER = "last-event-id"


def resume_position(headers: dict[str, str]) -> int | None:
    raw = headers.get(RESUME_HEADER) or headers.get(RESUME_HEADER.title())
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidParamsError(message="Last-Event-ID must be a journal sequence") from None
    if not 0 <= value <= MAX_SEQUENCE:
        raise InvalidParamsError(message="Last-Event-ID must be a journal sequence")
    return value


async def journal_stream(
    journal: A2AJournal,
    task_id: str,
    *,
    start: int,
    hold_until: int | None,
    poll: float,
    waker: Waker | None = None,
) -> AsyncIterator[Event]:
    """Snapshot at `start`, then events after it. Closes once caught up at a terminal state,
    or at an interrupted one reached after `hold_until` (a follow-up's own starting point).
    With `hold_until=None` (SubscribeToTask) only a terminal state closes it: an
    INPUT_REQUIRED task is still live, and the subscriber sees it resume (spec 3.1.6)."""
    snap = await asyncio.to_thread(journal.snapshot, task_id, start)
    if snap is None:
        raise TaskNotFoundError(message=f"Task {task_id} not found")
    task, state = snap
    position = int(task["metadata"]["sequence"])
    yield task_from_dict(task)
    while True:
        ticket = waker.ticket(task_id) if waker else 0
        events = await asyncio.to_thread(journal.events_after, task_id, position)
        for ev in events:
            yield event_proto(ev.payload)
            position = ev.sequence
            if ev.kind == "status":
                state = ev.state
        if events:
            continue
        interrupted = state in INTERRUPTED and hold_until is not None and position > hold_until
        if state in TERMINAL or interrupted:
            return
        if await asyncio.to_thread(journal.head, task_id) is None:
            return  # purged meanwhile
        if waker is not None:  # woken by the journal's commit (NOTIFY) on PostgreSQL
            await waker.wait(task_id, ticket)
        else:
            await asyncio.sleep(poll)
