"""Time to first token through the runtime against a direct call to the same local streaming
server, in one run (issue 29): `python -m bench.first_token [--runs N] [--postgres]
[--remote [--remote-poll SECONDS]]`.

Direct: a streamed POST to the server's /chat/completions, until its first text chunk.
Through the runtime: `runtime.start` of a run whose model is that server, until the first
text read by `runtime.follow` (the Python API): a live delta (the store's live table,
written by the worker's model activity), or the committed turn when that came first.
With `--remote` the follow is in another process (bench/first_token_remote.py), as the
operator API's or a Python client's is: on SQLite the publish reaches it across processes
(store/live/wake.py), not through the in-process bell. Two servers: one that answers at
once (target: under 50 ms added) and one whose first token takes 300 ms (target: under
1.15x). Each is printed as the ratio of the medians with the median of the paired
differences beside it."""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
from temporalio.client import Client

from agentrt.contracts.live import LiveDelta
from agentrt.core.devserver import extra_args
from agentrt.core.settings import Settings
from agentrt.store.db.sealing import Sealer
from bench.database import bench_database
from bench.first_token_remote import RemoteFollower
from bench.first_token_split import Timed, split_lines
from bench.harness import bench_settings, dev_server, running_worker
from bench.streaming_server import Step, StreamingServer, streaming

PROFILES = Path(__file__).resolve().parent / "first_token.yaml"
WORDS: list[Step] = ["Hello", " there,", " friend."]
CASES = {  # name: (the server's script, the target)
    "at once": (WORDS, "added < 50 ms"),
    "first token 300 ms": ([0.3, *WORDS], "ratio < 1.15"),
}
ADDED_MS, RATIO = 50.0, 1.15


async def direct(http: httpx.AsyncClient) -> float:
    body = {"model": "local", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    began = time.monotonic()
    async with http.stream("POST", "chat/completions", json=body) as reply:
        async for line in reply.aiter_lines():
            if '"content"' in line:
                return time.monotonic() - began
    raise AssertionError("the server sent no text")


STARTS: list[float] = []  # how long each `runtime.start` took (the begin, before any call)
TIMED: list[tuple[str, float, float]] = []  # each run's id, wall clock at its start and first text
REMOTE: list[RemoteFollower] = []  # with --remote: the follower in another process


async def through_runtime(bench_runtime: object) -> float:
    from agentrt.starter.facade import AgentRuntime

    assert isinstance(bench_runtime, AgentRuntime)
    wall, began = time.time(), time.monotonic()
    run_id = await bench_runtime.start("bench-stream", "hi")
    STARTS.append(time.monotonic() - began)
    first = None
    if REMOTE:
        first = await REMOTE[0].first_text(run_id) - began
        view = await bench_runtime.result(run_id)
        assert view.status.value == "COMPLETED", view
        TIMED.append((run_id, wall, wall + first))
        return first
    async with aclosing(bench_runtime.follow(run_id)) as items:
        async for item in items:
            # A fast call may be stored before a poll sees its deltas: its committed turn
            # is then where the client first sees the text.
            if (isinstance(item, LiveDelta) and item.kind == "delta") or (
                not isinstance(item, LiveDelta) and item.kind.value == "llm"
            ):
                first = time.monotonic() - began
                break
    view = await bench_runtime.result(run_id)
    assert view.status.value == "COMPLETED" and first is not None, view
    TIMED.append((run_id, wall, wall + first))
    return first


async def measure(
    runs: int, postgres_dsn: str | None, remote: bool = False, poll: float = 0.01
) -> list[str]:
    keys = f"bench:{Sealer.new_key_b64()}"
    with (
        tempfile.TemporaryDirectory(prefix="agentrt-ttft-") as tmp,
        bench_database(Path(tmp), postgres_dsn) as url,
        streaming(WORDS) as (server, base),
    ):
        settings = bench_settings(database_url=url, seal_keys=keys, data_dir=Path(tmp)).replace(
            worker={"profiles_file": PROFILES},
            providers={"openai_api_key": "bench-key", "openai_base_url": base},
        )
        async with (
            dev_server(extra_args()) as client,
            running_worker(client, settings) as bench,
            httpx.AsyncClient(base_url=base + "/") as http,
        ):
            if remote:  # the worker has made the schema: the follower opens it as a client
                REMOTE.append(RemoteFollower(url, keys, poll))
            try:
                return await _cases(client, bench, server, http, runs)
            finally:
                for follower in REMOTE:
                    follower.close()
                REMOTE.clear()


async def _cases(
    client: Client, bench: Any, server: StreamingServer, http: httpx.AsyncClient, runs: int
) -> list[str]:
    await through_runtime(bench.runtime)  # warm: the profile, connections, caches
    lines: list[str] = []
    timed: dict[str, list[Timed]] = {}
    for name, (script, target) in CASES.items():
        TIMED.clear()
        pairs = await _pairs(server, script, http, bench, runs)
        lines.append(_case(name, target, pairs))
        timed[name] = [Timed(*t, direct=p[0]) for t, p in zip(TIMED, pairs, strict=True)]
    lines += ["", "Where the time through the runtime goes (medians):", ""]
    lines += await split_lines(client, timed)
    return lines


async def _pairs(
    server: StreamingServer, script: list[Step], http: httpx.AsyncClient, bench: object, runs: int
) -> list[tuple[float, float]]:
    server.scripts = [script]
    pairs = []
    for _ in range(runs):
        d = await direct(http)
        r = await through_runtime(bench.runtime)
        pairs.append((d, r))
    return pairs


def _case(name: str, target: str, pairs: list[tuple[float, float]]) -> str:
    d = statistics.median(p[0] for p in pairs)
    r = statistics.median(p[1] for p in pairs)
    added = statistics.median(p[1] - p[0] for p in pairs)
    ok = added * 1000 < ADDED_MS if target.startswith("added") else r / d < RATIO
    return (
        f"| {name} | {d * 1000:.1f} ms | {r * 1000:.1f} ms | {r / d:.2f}x "
        f"| {added * 1000:+.1f} ms | {target}: {'ok' if ok else 'OVER'} |"
    )


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench.first_token", description=__doc__)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--postgres", action="store_true")
    p.add_argument("--remote", action="store_true", help="follow from another process")
    p.add_argument(
        "--remote-poll", type=float, default=0.01, help="its poll (0.2: the operator API's)"
    )
    ns = p.parse_args()
    dsn = os.environ.get("AGENTRT_POSTGRES_DSN", Settings().database.postgres_dsn)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lines = asyncio.run(measure(ns.runs, dsn if ns.postgres else None, ns.remote, ns.remote_poll))
    if ns.remote:
        print(f"(followed from another process, polling every {ns.remote_poll} s)")
    print("| server | direct (median) | through the runtime | ratio | added (median) | target |")
    print("|---|---|---|---|---|---|")
    for line in lines:
        print(line)
    print(f"\n`runtime.start` alone (the run begun by a worker): median "
          f"{statistics.median(STARTS) * 1000:.1f} ms")  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
