"""A remote A2A agent's skill called as a tool (issue 43) against a tool called inline,
runs interleaved one by one, on a worker of their own beside the remote agentrt of the team
demo (workers/team_remote.py: `agentrt-api serve` in its own process, its own database
and worker, on the same dev server).

- `inline`: `lookup_order` (model -> tool -> model).
- `remote`: `carrier.quote` (model -> the A2A call -> model): `message/send` (or
  `message/stream` where the run shows live output), the task followed until it
  completes; the card is checked against its pin once per worker process, not per call.

Per pair: the call's step on the server's clock (the model call that asked for it
completed -> the next model call scheduled), and the HTTP requests the remote API answered
during the remote run (its access log). One HTTP round trip is timed alone (a GET of the
card from this process): the remote step's extra over the inline one is reported in those
round trips too. Issue 43's target: a remote call adds at most one HTTP round trip over a
tool call.
"""

import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from rich.console import Console
from temporalio.client import Client

from agentrt.activities.toolbox.remote_http import CARD_PATH
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import build_worker
from agentrt.workers.team_remote import TOOL, RemoteSide, offered, remote_side
from bench.config import BenchConfig
from bench.drive import BenchError, agent_run
from bench.harness import Bench
from bench.histories import fetch_facts
from bench.report import Report, Table, ms

KINDS = {
    "inline": ("bench-read", "bench inline read"),
    "remote": ("bench-remote", "bench remote read"),
}


def _profiles(remote: RemoteSide) -> list[Profile]:
    inline = Profile(name="bench-read", model="scripted:bench", tools=["lookup_order"],
                     approval="none")  # fmt: skip
    called = Profile(name="bench-remote", model="scripted:bench", tools=[remote.agent],
                     approval="none")  # fmt: skip
    return [inline, called]


@asynccontextmanager
async def _caller(client: Client, settings: Settings) -> AsyncIterator[tuple[Bench, RemoteSide]]:
    async with remote_side(client, settings, Console(stderr=True)) as remote:
        own = settings.replace(
            temporal={"task_queue": f"{settings.temporal.task_queue}-caller"},
            worker={"remote_agents_allowed_networks": "127.0.0.1/32"},
        )
        # Its own plugin's worker: one that opens its resources serves the remote agents.
        worker, parts = build_worker(client, own, profiles=_profiles(remote))
        with parts:
            async with worker:
                await offered(parts, TOOL)
                bench = Bench(client, parts, RunStore(parts.ctx), own.temporal.task_queue,
                              own.limits.max_iterations_ceiling)  # fmt: skip
                yield bench, remote


def _requests(remote: RemoteSide) -> int:
    return sum(1 for line in remote.log.read_text(errors="replace").splitlines()
               if "uvicorn.access" in line)  # fmt: skip


async def _step_ms(bench: Bench, run_id: str) -> float:
    spans = [s for s in (await fetch_facts(bench.client, run_id)).spans
             if s.activity_type == "model.complete"]  # fmt: skip
    if len(spans) != 2:
        raise BenchError(f"run {run_id} made {len(spans)} model calls, not 2")
    return (spans[1].scheduled_ns - spans[0].completed_ns) / 1e6


async def _round_trip_ms(url: str, n: int) -> float:
    async with httpx.AsyncClient(timeout=10) as http:
        await http.get(f"{url}/{CARD_PATH}")  # the connection, made once
        times = []
        for _ in range(n):
            start = time.perf_counter()
            (await http.get(f"{url}/{CARD_PATH}")).raise_for_status()
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def measure(client: Client, settings: Settings, cfg: BenchConfig) -> Report:
    print("  remote agent call vs tool call", file=sys.stderr, flush=True)
    ids: dict[str, list[str]] = {k: [] for k in KINDS}
    requests: list[int] = []
    async with _caller(client, settings) as (bench, remote):
        for _ in range(cfg.warmup):
            for profile, prompt in KINDS.values():
                await agent_run(bench, profile, prompt)
        order = list(KINDS)
        for _ in range(cfg.runs):
            for kind in order:
                before = await asyncio.to_thread(_requests, remote)
                _, result = await agent_run(bench, *KINDS[kind])
                if kind == "remote":
                    requests.append(await asyncio.to_thread(_requests, remote) - before)
                ids[kind].append(result.run_id)
            order.reverse()
        rtt = await _round_trip_ms(remote.url, max(cfg.runs, 5))
        steps = {k: [await _step_ms(bench, r) for r in run_ids] for k, run_ids in ids.items()}
    return tables(steps, requests, rtt)


def tables(steps: dict[str, list[float]], requests: list[int], rtt: float) -> Report:
    extra = [r - i for r, i in zip(steps["remote"], steps["inline"], strict=True)]
    in_trips = [e / rtt for e in extra]
    report = Report()
    med = statistics.median
    report.tables.append(Table(
        "Remote agent call vs tool call (medians; spread min-max)",
        ["measure", "pairs", "value"],
        [
            ["inline tool step, server clock (ms)", str(len(extra)), ms(med(steps["inline"]))],
            ["remote call step, server clock (ms)", str(len(extra)), ms(med(steps["remote"]))],
            ["remote - inline (ms)", str(len(extra)),
             f"{med(extra):.1f} ({min(extra):.1f}-{max(extra):.1f})"],
            ["one HTTP round trip alone, loopback (ms)", "-", ms(rtt)],
            ["remote - inline, in HTTP round trips", str(len(extra)),
             f"{med(in_trips):.1f} ({min(in_trips):.1f}-{max(in_trips):.1f})"],
            ["HTTP requests the remote answered per call", str(len(requests)),
             f"{med(requests):.0f} ({min(requests)}-{max(requests)})"],
        ],
        ["Issue 43's target: a remote call adds at most one HTTP round trip over a tool call.",
         "The remote's own agent run (its model call) is inside the remote call's step."],
    ))  # fmt: skip
    report.figures["remote.extra_ms"] = med(extra)
    report.figures["remote.extra_round_trips"] = med(in_trips)
    report.figures["remote.requests_per_call"] = med(requests)
    return report
