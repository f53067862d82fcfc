"""The load section's starts from a client process of their own (the default; `--load-client
one` keeps them in the bench's process).

In one process, the starts share an event loop with the level's hundreds of SSE
followers, the deciders and the watcher: a start's answer waits there behind their reads,
and that wait counted as the start's latency. A client that starts runs is not the client
that follows them, so the starts run here, in `python -m bench.load_starts`, with the same
code (load_drive.starts), and report each answer as it comes (the followers of that run
begin then) and, at the end, what they measured.

Protocol: the parent writes one JSON line (url, token, sizes); the child writes
`{"i": i, "run_id": ...}` per start answered or given up, then `{"tally": {...}}`."""

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from bench.load_drive import Sizes, Tally, starts
from bench.load_probe import loop_lag


async def apart(
    base_url: str, starter: str, c: httpx.AsyncClient, t: Tally, sizes: Sizes,
    answered: Callable[[int], None],
) -> None:  # fmt: skip
    """load_drive.StartAll (with the url and token bound) in a child process; `c` unused."""
    del c
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.load_starts",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,  # the tally's line holds every latency
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    ask = {"url": base_url, "token": starter, "sizes": sizes.__dict__}
    child.stdin.write((json.dumps(ask) + "\n").encode())
    await child.stdin.drain()
    child.stdin.close()
    got_tally = False
    async for raw in child.stdout:
        line = json.loads(raw)
        if "i" in line:
            if line["run_id"] is not None:
                t.run_ids[line["i"]] = line["run_id"]
            answered(line["i"])
        elif "tally" in line:
            _merge(t, line["tally"])
            got_tally = True
    if await child.wait() != 0 or not got_tally:
        raise RuntimeError(f"the starts' process failed (exit {child.returncode})")


def _merge(t: Tally, got: dict[str, Any]) -> None:
    for endpoint, xs in got["latency"].items():
        t.latency.setdefault(endpoint, []).extend(xs)
    t.answered_live |= set(got["answered_live"])
    t.accepted_refused += got["accepted_refused"]
    t.errors.update(got["errors"])
    t.lag["starts"] += got["lag"]
    t.cpu["starts"] = got["cpu"]


async def _main() -> None:
    ask = json.loads(sys.stdin.readline())
    sizes = Sizes(**ask["sizes"])
    t = Tally(began=time.monotonic())
    out = sys.stdout

    def answered(i: int) -> None:
        out.write(json.dumps({"i": i, "run_id": t.run_ids.get(i)}) + "\n")
        out.flush()

    headers = {"Authorization": f"Bearer {ask['token']}"}
    limits = httpx.Limits(max_connections=sizes.starts + 10)
    timeout = httpx.Timeout(60.0, read=120.0)
    cpu0 = time.process_time()
    client = httpx.AsyncClient(base_url=ask["url"], headers=headers, limits=limits, timeout=timeout)
    async with client as c, loop_lag(t.lag["starts"]):
        await starts(c, t, sizes, answered)
    tally = {
        "latency": t.latency, "answered_live": sorted(t.answered_live),
        "accepted_refused": t.accepted_refused, "errors": dict(t.errors),
        "lag": t.lag["starts"], "cpu": time.process_time() - cpu0,
    }  # fmt: skip
    out.write(json.dumps({"tally": tally}) + "\n")
    out.flush()


if __name__ == "__main__":
    asyncio.run(_main())
