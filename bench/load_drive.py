"""The load section's client: one load level against the real operator API over HTTP.

Starts (`POST /runs`, at most `starts` in flight; every other one asks `Prefer:
respond-async`), SSE followers of the runs (`GET /runs/{id}/events`, resuming with
`Last-Event-ID` when a stream breaks), deciders that read `GET /inbox` and approve what
waits (at most `decisions` in flight), and a watcher that reads `GET /runs/{id}` until every
run has ended. What each saw is kept to be checked against the store afterwards."""

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable

import httpx

from bench.load_probe import loop_lag
from bench.load_tally import (
    ACCEPTED,
    ASYNC,
    AWAY_SECONDS,
    BEGUN,
    DECISION,
    INBOX,
    NOT_BEGUN_SECONDS,
    PROFILE,
    RECONNECTS,
    RESENT,
    RUN,
    SSE,
    START_ATTEMPTS,
    WATCHERS,
    Follow,
    Sizes,
    Tally,
)  # fmt: skip

__all__ = ["ACCEPTED", "BEGUN", "DECISION", "INBOX", "PROFILE", "RESENT", "RUN", "Sizes", "Tally"]


async def _start(
    c: httpx.AsyncClient, t: Tally, i: int, answered: Callable[[int], None], sizes: Sizes
) -> None:
    run_id = str(uuid.uuid4())
    body = {"profile": sizes.profile, "prompt": sizes.prompt, "run_id": run_id}
    refused = 0  # answers of 503: sent again after their Retry-After, START_ATTEMPTS times
    away: float | None = None  # since when the API does not answer at all (killed)
    while refused < START_ATTEMPTS:  # a retry of the same run id is the same start
        began = time.monotonic()
        try:
            reply = await c.post("/runs", json=body, headers=ASYNC if i % 2 else {})
        except httpx.HTTPError as exc:
            # No answer (the API killed mid-request, or not back yet): Temporal may hold
            # the run; the same start is sent again, as the retry contract says.
            t.errors[f"start {type(exc).__name__}"] += 1
            away = away or began
            if began - away > AWAY_SECONDS:
                break
            await asyncio.sleep(0.5)
            continue
        away = None
        took = time.monotonic() - began
        if reply.status_code == 202:
            t.took(ACCEPTED, took)
            _phases(t, reply.headers.get("Server-Timing", ""), took)
        elif reply.status_code in (200, 201):
            # 200: a start sent again (after no answer) answered with its run.
            t.took(BEGUN if reply.status_code == 201 else RESENT, took)
            t.accepted_refused += i % 2 and reply.status_code == 201
            run = reply.json().get("run") or {}
            if run.get("status") not in (None, "STARTING"):
                t.answered_live.add(run_id)
        else:
            refused += 1
            t.errors[f"start {reply.status_code}"] += 1
            if reply.status_code == 503:
                # Withdrawn (no_worker, busy): the same id would answer the same 503 for
                # good; the retry contract says to start again under a new one.
                run_id = str(uuid.uuid4())
                body["run_id"] = run_id
            await asyncio.sleep(_retry_after(reply))
            continue
        t.run_ids[i] = run_id
        answered(i)
        return
    t.errors["start gave up"] += 1
    answered(i)


def _phases(t: Tally, header: str, took: float) -> None:
    """An accepted start's time by phase (its `Server-Timing`), and the rest: the time
    before its handler ran (the auth dependency, the event loop, the HTTP server) and after."""
    inside = 0.0
    for part in header.split(","):
        name, _, dur = part.strip().partition(";dur=")
        if name and dur:
            inside += float(dur) / 1000
            t.took(f"{ACCEPTED} {name}", float(dur) / 1000)
    t.took(f"{ACCEPTED} outside handler", max(0.0, took - inside))


def _retry_after(reply: httpx.Response) -> float:
    try:
        return min(5.0, max(0.2, float(reply.headers.get("Retry-After", "0.5"))))
    except ValueError:
        return 0.5


async def starts(
    c: httpx.AsyncClient, t: Tally, sizes: Sizes, answered: Callable[[int], None]
) -> None:
    """Every start of the level, `sizes.starts` in flight; `answered(i)` once start i has
    its answer (t.run_ids[i] set) or gave up."""
    gate = asyncio.Semaphore(sizes.starts)

    async def one(i: int) -> None:
        async with gate:
            await _start(c, t, i, answered, sizes)

    await asyncio.gather(*(one(i) for i in range(sizes.runs)))


def _frames(lines: list[str]) -> tuple[int | None, str, str]:
    ident, event, data = None, "message", ""
    for line in lines:
        key, _, value = line.partition(": ")
        if key == "id":
            ident = int(value)
        elif key == "event":
            event = value
        elif key == "data":
            data = value
    return ident, event, data


async def _follow(c: httpx.AsyncClient, t: Tally, f: Follow, ready: asyncio.Event) -> None:
    await ready.wait()
    run_id = t.run_ids.get(f.run)
    if run_id is None:
        return  # never started: counted with the starts
    last: int | None = None
    give_up = time.monotonic() + NOT_BEGUN_SECONDS
    away: float | None = None  # since when the API refuses connections (killed)
    while not f.ended and f.reconnects <= RECONNECTS:
        headers = SSE if last is None else {**SSE, "Last-Event-ID": str(last)}
        try:
            async with c.stream("GET", f"/runs/{run_id}/events", headers=headers) as reply:
                away = None
                if reply.status_code != 200:
                    t.errors[f"follow {reply.status_code}"] += 1
                    raise httpx.TransportError("refused")
                lines: list[str] = []
                async for line in reply.aiter_lines():
                    if line:
                        lines.append(line)
                        continue
                    ident, event, data = _frames(lines)
                    lines = []
                    if event == "end":
                        # An accepted start's run not begun yet has no row: the follow ends
                        # at once with no status. Follow again until it has begun.
                        f.ended = json.loads(data).get("status") is not None
                        f.early_ends += not f.ended
                        break
                    if ident is not None:
                        f.seen.append(ident)
                        last = ident
        except httpx.ConnectError:
            # The API is not there (killed, starting again): resume once it is back.
            away = away or time.monotonic()
            if time.monotonic() - away < AWAY_SECONDS:
                await asyncio.sleep(0.5)
                continue
        except httpx.HTTPError:
            pass
        if not f.ended:
            if f.early_ends and time.monotonic() < give_up:
                await asyncio.sleep(0.3)
                continue
            f.reconnects += 1
            await asyncio.sleep(0.2)


async def _decide(c: httpx.AsyncClient, t: Tally, run_id: str, digest: str) -> bool:
    """Approve; False when the decision should be made again (the run still waits)."""
    began = time.monotonic()
    try:
        reply = await c.post(
            f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
        )
    except httpx.HTTPError as exc:
        t.errors[f"decision {type(exc).__name__}"] += 1
        t.unanswered.add(run_id)
        return False
    t.took(DECISION, time.monotonic() - began)
    if reply.status_code == 200:
        t.approved.add(run_id)
        return True
    if reply.status_code < 500 and reply.json().get("error", {}).get("type") == "already_decided":
        # This decider is the only one, and it approves: a decision made before its
        # answer was lost (the API killed) is this approval.
        t.approved.add(run_id)
        return True
    t.errors[f"decision {reply.status_code}"] += 1
    return False


async def _deciders(c: httpx.AsyncClient, t: Tally, sizes: Sizes, done: asyncio.Event) -> None:
    gate = asyncio.Semaphore(sizes.decisions)
    deciding: set[str] = set()
    tasks: set[asyncio.Task[None]] = set()

    async def one(run_id: str, digest: str) -> None:
        async with gate:
            if not await _decide(c, t, run_id, digest):
                deciding.discard(run_id)  # the next read of the inbox decides it again

    while not done.is_set():
        began = time.monotonic()
        try:
            reply = await c.get("/inbox", params={"limit": 200})
            t.took(INBOX, time.monotonic() - began)
            waiting = reply.json() if reply.status_code == 200 else []
        except httpx.HTTPError as exc:
            t.errors[f"inbox {type(exc).__name__}"] += 1
            waiting = []
        for run in waiting:
            pending = run.get("pending_approval")
            if run["run_id"] in deciding or not pending:
                continue
            deciding.add(run["run_id"])
            task = asyncio.create_task(one(run["run_id"], pending["turn_digest"]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.sleep(0.2)
    await asyncio.gather(*tasks)


async def _watch(c: httpx.AsyncClient, t: Tally, sizes: Sizes, deadline: float) -> None:
    """GET /runs/{id} of every started run not yet ended, until all have or time is up."""
    gate = asyncio.Semaphore(WATCHERS)

    async def one(run_id: str) -> None:
        async with gate:
            began = time.monotonic()
            try:
                reply = await c.get(f"/runs/{run_id}")
            except httpx.HTTPError as exc:
                t.errors[f"run {type(exc).__name__}"] += 1
                return
            t.took(RUN, time.monotonic() - began)
            if reply.status_code == 200 and reply.json()["status"] in TERMINAL:
                t.final[run_id] = reply.json()["status"]
                t.ended_at[run_id] = time.monotonic()

    while time.monotonic() < deadline:
        open_ = [r for r in t.run_ids.values() if r not in t.final]
        if not open_ and len(t.run_ids) + t.errors["start gave up"] >= sizes.runs:
            return
        await asyncio.gather(*(one(r) for r in open_))
        await asyncio.sleep(0.5)


TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "MAX_ITERATIONS"}


# Runs every start of a level: `starts` here, in the client's own loop, or
# bench.load_starts.apart, in a process of its own.
StartAll = Callable[[httpx.AsyncClient, Tally, Sizes, Callable[[int], None]], Awaitable[None]]


async def drive(
    base_url: str, starter: str, decider: str, sizes: Sizes, seconds: float,
    start_all: StartAll = starts,
) -> Tally:  # fmt: skip
    """One level; returns what every client saw."""
    t = Tally(began=time.monotonic())
    limits = httpx.Limits(max_connections=sizes.followers + sizes.starts + sizes.decisions + 40)
    ready = [asyncio.Event() for _ in range(sizes.runs)]
    followed = max(1, sizes.runs // 4)  # a quarter of the runs, several followers each
    t.follows = [Follow(run=j % followed) for j in range(sizes.followers)]
    timeout = httpx.Timeout(60.0, read=120.0)
    auth = {"Authorization": f"Bearer {starter}"}
    cpu0 = time.process_time()
    async with (
        httpx.AsyncClient(base_url=base_url, headers=auth, limits=limits, timeout=timeout) as c,
        httpx.AsyncClient(
            base_url=base_url, headers={"Authorization": f"Bearer {decider}"}, limits=limits,
            timeout=timeout,
        ) as d,
        loop_lag(t.lag["client"]),
    ):  # fmt: skip
        done = asyncio.Event()
        deciders = asyncio.create_task(_deciders(d, t, sizes, done))
        followers = [asyncio.create_task(_follow(c, t, f, ready[f.run])) for f in t.follows]
        watcher = asyncio.create_task(_watch(c, t, sizes, time.monotonic() + seconds))
        await start_all(c, t, sizes, lambda i: ready[i].set())
        await watcher
        done.set()
        await deciders
        try:
            await asyncio.wait_for(asyncio.gather(*followers), 60)
        except TimeoutError:
            t.errors["followers still open at the end"] += sum(not f.ended for f in t.follows)
    t.cpu["client"] = time.process_time() - cpu0
    return t
