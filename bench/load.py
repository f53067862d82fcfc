"""The load section (`python -m bench --sections load`; issue 28 item 7): the operator API
and the workers under load, as deployed, on the benchmark's store (SQLite or PostgreSQL).

The API (`agentrt-api`, uvicorn on 127.0.0.1) and `load_workers` worker processes run
against one dev server. Each level drives them over HTTP (bench/load_drive.py): the base
level is `load_runs` runs (profile bench-load: one refund that waits for approval) with
`load_starts` starts in flight, `load_followers` SSE followers and `load_decisions`
decisions in flight; the next levels multiply all four. Printed per level: latency
percentiles per endpoint, runs/s, lost and duplicated items (bench/load_check.py; both
must be 0), the API's and the workers' peak RSS and CPU, against the issue's targets."""

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial

import httpx

from agentrt.core.devserver import extra_args, free_port
from agentrt.core.settings import Settings
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import PrincipalStore
from bench.capacity import until_polled
from bench.chaos import worker_env
from bench.config import BenchConfig
from bench.harness import dev_server
from bench.load_api import Fleet, api_up, fleet, profile_env
from bench.load_check import Checked, check
from bench.load_drive import (
    ACCEPTED,
    BEGUN,
    DECISION,
    INBOX,
    PROFILE,
    RESENT,
    RUN,
    Sizes,
    Tally,
    drive,
    starts,
)
from bench.load_probe import (
    buckets,
    histogram_percentile,
    in_background,
    requests_between,
    where,
)
from bench.load_starts import apart
from bench.procstat import cpu_seconds, descendants, rss_bytes
from bench.report import Report, Table, verdict
from bench.stats import percentile

MB = 1024 * 1024
ACCEPTED_P95_MS, INBOX_P95_MS = 250.0, 1000.0  # at 2x (inbox: on SQLite)
# An accepted start's phases (its Server-Timing) after it: where its time went.
# (`profile`, `run` and `loop`: the phases before the reads were one hop; a phase no
# answer named is not shown.)
_PHASE_NAMES = ("token", "reads", "profile", "run", "loop", "temporal", "outside handler")
PHASES = tuple(f"{ACCEPTED} {p}" for p in _PHASE_NAMES)
ENDPOINTS = (BEGUN, ACCEPTED, *PHASES, RESENT, INBOX, RUN, DECISION)


@dataclass
class Level:
    times: int
    sizes: Sizes
    tally: Tally
    checked: Checked
    seconds: float
    rss_mb: dict[str, float]  # peak, per process group
    cpu_pct: dict[str, float]  # of one core, over the level
    # The dev server's own time for the start RPCs of the level: (n, p50 s, p95 s).
    server_start: tuple[int, float | None, float | None] = (0, None, None)
    api_killed: list[float] = field(default_factory=list)  # each SIGKILL's downtime, s


@contextlib.asynccontextmanager
async def _killing(procs: Fleet, after: float) -> AsyncIterator[None]:
    """With `after` > 0: the API SIGKILLed that many seconds into the level, and started
    again; the level waits for it to be back."""
    if after <= 0:
        yield
        return
    task = asyncio.create_task(procs.kill_api(after, _cpu))
    try:
        yield
    finally:
        if procs.killing:  # the API is being started again: the level waits for it
            await task
        else:  # the level ended first: no kill in it
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _devserver_pids() -> list[int]:
    """The dev server this process started (the temporal CLI, a child of this process)."""
    return [pid for pid, name in descendants(os.getpid()) if name.startswith("temporal")]


def _group(pids: list[int]) -> list[int]:
    return [*pids, *(child for pid in pids for child, _ in descendants(pid))]


def _rss(pids: list[int]) -> float:
    total = 0
    for pid in _group(pids):
        with contextlib.suppress(OSError, RuntimeError):
            total += rss_bytes(pid)
    return total / MB


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in _group(pids):
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


@contextlib.asynccontextmanager
async def _sampled(groups: dict[str, list[int]], peak: dict[str, float]) -> AsyncIterator[None]:
    async def sample() -> None:
        while True:
            for name, pids in groups.items():
                peak[name] = max(peak.get(name, 0.0), _rss(pids))
            await asyncio.sleep(0.5)

    async with in_background(sample()):
        yield


async def measure(cfg: BenchConfig, make_settings: Callable[[], Settings]) -> Report:
    settings = make_settings()
    url = settings.database.resolved_url()
    engine, ctx = open_store(url, Sealer.from_b64(settings.read_seal_keys()))
    principals = PrincipalStore(ctx)
    profile = cfg.load_profile
    _, starter = principals.create("bench-starter", ["runs:start", "runs:read"], profiles=[profile])
    _, decider = principals.create("bench-decider", ["runs:read-all", "runs:decide"])
    base = Sizes(cfg.load_runs, cfg.load_starts, cfg.load_followers, cfg.load_decisions, profile)
    levels: list[Level] = []
    port, metrics_port = free_port(), free_port()
    api_url = f"http://127.0.0.1:{port}"
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    start_all = starts if cfg.load_client == "one" else partial(apart, api_url, starter)
    try:
        async with dev_server([*extra_args(), "--metrics-port", str(metrics_port)]) as client:
            env = worker_env(settings, client.service_client.config.target_host)
            env.update(profile_env(profile))
            with fleet(env, cfg.load_workers, port) as procs:
                groups = procs.groups
                groups["devserver"] = _devserver_pids()
                await until_polled(client, settings.temporal.task_queue, cfg.load_workers)
                await api_up(api_url)
                for m in cfg.load_levels:
                    sizes = base.times(m)
                    print(f"  load {m}x: {sizes}", file=sys.stderr, flush=True)
                    peak: dict[str, float] = {}
                    cpu0 = {name: _cpu(pids) for name, pids in groups.items()}
                    rpc0 = await buckets(metrics)
                    began = time.monotonic()
                    kills = len(procs.killed)
                    async with _sampled(groups, peak), _killing(procs, cfg.load_kill_api):
                        tally = await drive(
                            api_url, starter, decider, sizes, cfg.load_seconds, start_all
                        )
                    seconds = time.monotonic() - began
                    if len(procs.killed) > kills:  # the killed API's CPU up to its kill
                        cpu0["api"] -= procs.api_cpu_at_kill
                    cpu = {n: 100 * (_cpu(p) - cpu0[n]) / seconds for n, p in groups.items()}
                    cpu |= {n: 100 * s / seconds for n, s in tally.cpu.items()}
                    rpc1 = await buckets(metrics)
                    rpc = (
                        requests_between(rpc0, rpc1),
                        histogram_percentile(rpc0, rpc1, 50),
                        histogram_percentile(rpc0, rpc1, 95),
                    )
                    auth = {"Authorization": f"Bearer {starter}"}
                    async with httpx.AsyncClient(base_url=api_url, headers=auth, timeout=60) as c:
                        checked = await check(c, ctx, tally)
                    down = procs.killed[kills:]
                    levels.append(Level(m, sizes, tally, checked, seconds, peak, cpu, rpc, down))
    finally:
        engine.dispose()
    return tables(levels, postgres=url.startswith("postgresql"), profile=profile)


def _ms(xs: list[float], pct: float) -> str:
    return f"{1000 * percentile(sorted(xs), pct):.0f}" if xs else "-"


def _runs_per_second(t: Tally) -> float:
    if not t.ended_at:
        return 0.0
    return len(t.ended_at) / max(1e-9, max(t.ended_at.values()) - t.began)


def tables(levels: list[Level], *, postgres: bool, profile: str = PROFILE) -> Report:
    report = Report()
    store = "PostgreSQL" if postgres else "SQLite"
    if profile != PROFILE:
        store += f", {profile}"
    lat = Table(f"Load: latency per endpoint ({store})",
                ["level", "endpoint", "n", "p50 ms", "p95 ms", "p99 ms"])  # fmt: skip
    summary = Table(
        f"Load: runs, lost and duplicated items, processes ({store})",
        ["level", "runs", "runs/s", "ended", "lost", "duplicated", "late events",
         "live then withdrawn",
         "API RSS MB", "workers RSS MB", "API CPU %", "workers CPU %", "API SIGKILL", "errors"],
    )  # fmt: skip
    for lv in levels:
        t, c = lv.tally, lv.checked
        for endpoint in ENDPOINTS:
            xs = t.latency.get(endpoint, [])
            if endpoint in (*PHASES, RESENT) and not xs:
                continue
            shown = [_ms(xs, 50), _ms(xs, 95), _ms(xs, 99)]
            if endpoint == ACCEPTED and not xs:
                shown = ["not available", "-", "-"]
            lat.rows.append([f"{lv.times}x", endpoint, str(len(xs)), *shown])
            if xs and endpoint not in PHASES:
                key = endpoint.split(" (")[-1].rstrip(")") if "(" in endpoint else endpoint
                report.figures[f"load.{lv.times}x.{key}.p95_ms"] = 1000 * percentile(sorted(xs), 95)
        ended = ", ".join(f"{k} {v}" for k, v in sorted(c.statuses.items()))
        errors = ", ".join(f"{k}: {v}" for k, v in sorted(t.errors.items())) or "none"
        summary.rows.append([
            f"{lv.times}x", str(lv.sizes.runs), f"{_runs_per_second(t):.2f}", ended,
            f"{c.lost} (follow {c.follow_lost}, ledger {c.ledger_lost}, runs {c.runs_unended})",
            f"{c.duplicated} (follow {c.follow_duplicated}, order {c.out_of_order}, "
            f"ledger {c.ledger_duplicated})", str(c.late), str(c.withdrawn),
            f"{lv.rss_mb.get('api', 0):.0f}", f"{lv.rss_mb.get('workers', 0):.0f}",
            f"{lv.cpu_pct['api']:.0f}", f"{lv.cpu_pct['workers']:.0f}",
            ", ".join(f"back in {s:.1f}s" for s in lv.api_killed) or "-", errors,
        ])  # fmt: skip
        report.figures[f"load.{lv.times}x.runs_per_s"] = _runs_per_second(t)
        report.figures[f"load.{lv.times}x.lost"] = c.lost
        report.figures[f"load.{lv.times}x.duplicated"] = c.duplicated
        report.figures[f"load.{lv.times}x.late_events"] = c.late
        report.figures[f"load.{lv.times}x.withdrawn"] = c.withdrawn
        report.figures[f"load.{lv.times}x.api_kills"] = len(lv.api_killed)
        # Requests that got no answer at all (the API away): what a kill did to the clients.
        report.figures[f"load.{lv.times}x.unanswered"] = sum(
            n for what, n in t.errors.items() if what.endswith("Error")
        )
    summary.notes.append(
        "lost: events a follower never saw, approved runs without their ledger row, runs "
        "not ended by the deadline; duplicated: events seen twice or out of order, ledger "
        "rows past one per approved run; late events: events of the followed runs committed "
        "after one of a higher sequence (each one a follow by sequence skipped)"
    )
    if any(lv.tally.accepted_refused for lv in levels):
        summary.notes.append(
            "accepted starts not available: `Prefer: respond-async` was answered as a "
            "begun start (the server does not offer accepted starts yet)"
        )
    seen = [(lv.times, lv.server_start, lv.tally.lag, lv.cpu_pct) for lv in levels]
    report.tables += [lat, summary, where(store, seen), _targets(levels, postgres)]
    return report


def _targets(levels: list[Level], postgres: bool) -> Table:
    table = Table("Load: targets (issue 28 item 7)", ["measure", "value", "target", ""])
    for lv in levels:
        t, c = lv.tally, lv.checked
        if lv.times == 2:
            table.rows.append(["2x lost + duplicated", str(c.lost + c.duplicated), "0",
                               verdict(c.lost + c.duplicated == 0)])  # fmt: skip
            xs = t.latency.get(ACCEPTED, [])
            if xs:
                p95 = 1000 * percentile(sorted(xs), 95)
                table.rows.append([
                    "2x accepted start p95", f"{p95:.0f} ms", f"< {ACCEPTED_P95_MS:.0f} ms",
                    verdict(p95 < ACCEPTED_P95_MS)
                ])  # fmt: skip
            else:
                table.rows.append(["2x accepted start p95", "not available", "< 250 ms", ""])
            inbox = t.latency.get(INBOX, [])
            if inbox and not postgres:
                p95 = 1000 * percentile(sorted(inbox), 95)
                ok = verdict(p95 < INBOX_P95_MS)
                table.rows.append(
                    ["2x GET /inbox p95 (SQLite)", f"{p95:.0f} ms", f"< {INBOX_P95_MS:.0f} ms", ok]
                )
        if lv.times == 4:
            table.rows.append(["4x starts answered live, then withdrawn", str(c.withdrawn),
                               "0", verdict(c.withdrawn == 0)])  # fmt: skip
    if not table.rows:
        table.notes.append("the targets are set at 2x and 4x: no such level ran")
    return table
