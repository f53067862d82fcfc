"""Following a run as it happens: its committed events and its live output (deltas of the
model's text while it is written, retract marks), in order. In process it reads the store
(the events and the live table the model worker writes); through the operator API it reads
`GET /runs/{id}/live`. Nothing of it goes through Temporal.

A client shows each `LiveDelta` of kind `delta` as it comes, drops the text a turn has
shown so far on a `retract` (a retried or fallen-back model call), and replaces a turn's
text by its committed `llm` event's when that comes."""

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
from rich.console import Console

from agentrt.contracts.enums import EventKind
from agentrt.contracts.errors import AgentRuntimeError, by_code
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.views import EventView, RunView
from agentrt.starter import render
from agentrt.starter.client import RuntimeClient
from agentrt.store.live.bell import LIVE_BELL
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.record import RunStore

Followed = EventView | LiveDelta


async def follow_store(
    runs: RunStore, live: LiveStore, run_id: str, poll_seconds: float = 0.01
) -> AsyncIterator[Followed]:
    """Every event and live piece of the run until it ends; a turn's pieces come before its
    event, and none of a turn already committed. A publish in this process wakes it at
    once (store/live/bell.py), and so does one in another process on SQLite (its wake
    socket, store/live/wake.py); otherwise it finds what changed by its poll."""
    with LIVE_BELL.subscribe(run_id) as bell, live.following():
        # `last` is a position (commit order, migration 0018), not a sequence: a lower
        # sequence may commit later. `committed`: the highest sequence seen, whose turn's
        # deltas are done (api/operator/sse.py's follow keeps the same two).
        last, live_last, committed = -1, 0, -1
        while True:
            bell.clear()  # before the reads: a publish after them rings again
            # Taken before the reads too: a change after them shows as a different mark.
            # One thread hop for both: a woken follower is on the first token's path.
            mark, pieces = await asyncio.to_thread(_marked_read, live, run_id, live_last)
            for d in pieces:
                live_last = d.id
                if d.sequence > committed:
                    yield d
            batch = await asyncio.to_thread(runs.events, run_id, last)
            for e in batch:
                last, committed = e.position, max(committed, e.sequence)
                yield e
            if batch or pieces:
                continue
            status = await asyncio.to_thread(runs.status, run_id)
            if status is None or status.terminal:
                for e in await asyncio.to_thread(runs.events, run_id, last):
                    yield e  # the settling event commits with the status
                return
            # Idle: one cheap read per interval until something changes, then the reads
            # above; a ring skips the wait.
            while not await bell.wait(poll_seconds):
                if await asyncio.to_thread(live.mark, run_id) != mark:
                    break


def _marked_read(
    live: LiveStore, run_id: str, after: int
) -> tuple[tuple[int | None, int | None, str | None], list[LiveDelta]]:
    return live.mark(run_id), live.read(run_id, after)


async def follow_api(http: httpx.AsyncClient, run_id: str) -> AsyncIterator[Followed]:
    """The same through the operator API's SSE follow, until its `end` frame."""
    try:
        async with http.stream("GET", f"/runs/{run_id}/live", timeout=None) as reply:
            if not reply.is_success:
                await reply.aread()
                raise refusal(reply)
            event, data = "", ""
            async for line in reply.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data += line[6:]
                elif line == "" and data:
                    if event in ("end", "error"):
                        if event == "error":
                            raise AgentRuntimeError(json.loads(data)["error"]["message"])
                        return
                    if event in ("delta", "retract"):
                        yield LiveDelta.model_validate_json(data)
                    else:
                        yield EventView.model_validate_json(data)
                    event, data = "", ""
    except httpx.HTTPError as exc:
        raise AgentRuntimeError(f"cannot follow run {run_id} through the API: {exc}") from None


def refusal(reply: httpx.Response) -> AgentRuntimeError:
    """The operator API's typed error (`{"error": {"type", "message"}}`) as ours."""
    try:
        err = reply.json()["error"]
        kind, message = str(err["type"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        kind, message = "http_error", reply.text[:200]
    return by_code(kind)(f"the API refused ({reply.status_code} {kind}): {message}")


async def print_live(runtime: RuntimeClient, run_id: str, out: Console, err: Console) -> None:
    """`agentrt run` on a terminal: the model's text on `out` as it is written; a retried
    call's withdrawn text is said so on `err` (a terminal cannot unprint it)."""
    open_line = False

    def end_line() -> None:
        nonlocal open_line
        if open_line:
            out.file.write("\n")
            out.file.flush()
        open_line = False

    async for item in runtime.follow(run_id):
        if isinstance(item, LiveDelta) and item.kind == "delta":
            out.file.write(item.text)
            out.file.flush()
            open_line = True
        elif isinstance(item, LiveDelta):
            end_line()
            err.print("(the model call was retried: the text above is withdrawn)", style="dim")
        elif item.kind is EventKind.LLM:
            end_line()


# After the run settles, how long `run` lets the live printer catch up before the summary.
PRINTER_DRAIN_SECONDS = 5.0


async def watched(
    runtime: RuntimeClient,
    run_id: str,
    out: Console,
    err: Console,
    on_waiting: render.OnWaiting,
    streaming: bool,
) -> RunView:
    """`render.watch`, with the model's text printed as it is written when `streaming`
    (then without the spinner, which would draw over it)."""
    printer = asyncio.create_task(print_live(runtime, run_id, out, err)) if streaming else None
    try:
        view = await render.watch(
            runtime, run_id, err, on_waiting=on_waiting, spinner=not streaming
        )
        if printer is not None:  # its follow ends with the run: let it print the rest
            await asyncio.wait({printer}, timeout=PRINTER_DRAIN_SECONDS)
        return view
    finally:
        if printer is not None:
            printer.cancel()
