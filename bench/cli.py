"""`python -m bench` (`./dev bench`): run the benchmark, print tables, write a markdown summary.

The entry point: flags and settings are read here and nowhere else in bench/.
"""

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, fields, replace
from datetime import UTC, datetime
from pathlib import Path

from agentrt.core.devserver import extra_args, temporal_cli
from agentrt.core.settings import Settings
from agentrt.store.db.sealing import Sealer
from bench import load, memory, parallel, repeat, tuning
from bench.config import BenchConfig, tiny
from bench.database import bench_database, describe
from bench.harness import RESULTS_DIR, bench_settings, dev_server
from bench.load_tally import PROMPTS
from bench.report import Report, Table, ms, times, verdict
from bench.slow_tools import TOOL_MS
from bench.suite import ON_SHARED_SERVER, run_shared
from bench.versus_report import PERSISTENT, SQL_TARGETS, STORELESS

DEFAULT_SECTIONS = (*ON_SHARED_SERVER, "memory", "devserver")
# Asked for by name only: the load section runs the API and workers for minutes per level.
ALL_SECTIONS = (*DEFAULT_SECTIONS, "load")


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def parse(argv: list[str] | None) -> argparse.Namespace:
    d = BenchConfig()
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument(
        "--sections",
        default=",".join(DEFAULT_SECTIONS),
        help=f"comma-separated subset of {','.join(ALL_SECTIONS)} (load only when named)",
    )
    p.add_argument("--runs", type=int, default=d.runs, help="sequential runs per kind and k")
    p.add_argument("--tools", type=_ints, default=d.tools, help="tool calls per run, e.g. 1,3,6")
    p.add_argument("--concurrency", type=int, default=d.concurrency)
    p.add_argument("--throughput-runs", type=int, default=d.throughput_runs)
    p.add_argument("--history-rounds", type=_ints, default=d.history_rounds)
    p.add_argument(
        "--long-history",
        type=int,
        default=d.long_history_rounds,
        help="rounds of the bench-only long run (49 = 50 model calls); 0 skips it",
    )
    p.add_argument("--fence-runs", type=int, default=d.fence_runs)
    p.add_argument(
        "--long-calls", type=int, default=d.long_calls, help="tool calls of the long run; 0 skips"
    )
    p.add_argument("--long-segment-rounds", type=int, default=d.long_segment_rounds)
    p.add_argument("--long-runs", type=int, default=d.long_runs, help="long runs per kind")
    p.add_argument("--burst", type=int, default=d.burst, help="runs started at once")
    p.add_argument("--burst-reps", type=int, default=d.burst_reps)
    p.add_argument(
        "--memory-runs", type=int, default=d.memory_runs, help="runs waiting (issue: 1000)"
    )
    p.add_argument("--full", action="store_true", help="the issue's sizes: 1000 waiting runs")
    p.add_argument("--server-runs", type=int, default=d.server_runs)
    p.add_argument("--ablate", action="store_true", help="also run without each TUNING key")
    p.add_argument("--persist", action="store_true", help="dev servers persist to a file")
    p.add_argument("--postgres", action="store_true", help="PostgreSQL (AGENTRT_POSTGRES_DSN)")
    p.add_argument("--db", choices=("sqlite", "postgres"), default=None, help="the store")
    p.add_argument("--tiny", action="store_true", help="smallest sizes: a quick check")
    p.add_argument(
        "--load-levels",
        type=_ints,
        default=None,
        help=f"the load section's levels, multiples of its base (default {d.load_levels})",
    )
    p.add_argument("--load-workers", type=int, default=None, help="the load section's workers")
    p.add_argument(
        "--load-kill-api",
        type=float,
        default=None,
        metavar="SECONDS",
        help="SIGKILL the operator API this many seconds into each load level and start it "
        "again (clients resend, resume and decide again; nothing may be lost)",
    )
    p.add_argument(
        "--load-client",
        choices=("split", "one"),
        default=None,
        help="the load section's starts from a client process of their own (split, the "
        "default) or from the one process that also follows and decides (one)",
    )
    p.add_argument(
        "--load-profile",
        choices=tuple(PROMPTS),
        default=None,
        help="the load section's runs: one refund that waits for approval (bench-load, the "
        "default), or that refund beside three reads finishing in the reverse of their "
        "order, so events commit out of sequence order (bench-load-parallel)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run the sections N times (a summary file each: OUT-1.md ...), then print each "
        "headline figure's median, range and how many runs met its target (bench/repeat.py)",
    )
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "latest.md")
    return p.parse_args(argv)


def config_from(ns: argparse.Namespace) -> BenchConfig:
    cfg = _sized(ns)
    if ns.load_levels:
        cfg = replace(cfg, load_levels=ns.load_levels)
    if ns.load_workers:
        cfg = replace(cfg, load_workers=ns.load_workers)
    if ns.load_kill_api:
        cfg = replace(cfg, load_kill_api=ns.load_kill_api)
    if ns.load_client:
        cfg = replace(cfg, load_client=ns.load_client)
    if ns.load_profile:
        cfg = replace(cfg, load_profile=ns.load_profile)
    return cfg


def _sized(ns: argparse.Namespace) -> BenchConfig:
    if ns.tiny:
        return tiny()
    return BenchConfig(
        runs=ns.runs,
        tools=ns.tools,
        concurrency=ns.concurrency,
        throughput_runs=ns.throughput_runs,
        history_rounds=ns.history_rounds,
        long_history_rounds=ns.long_history,
        fence_runs=ns.fence_runs,
        long_calls=ns.long_calls,
        long_segment_rounds=ns.long_segment_rounds,
        long_runs=ns.long_runs,
        burst=ns.burst,
        burst_reps=ns.burst_reps,
        memory_runs=1000 if ns.full else ns.memory_runs,
        server_runs=ns.server_runs,
        ablate=ns.ablate,
        persist=ns.persist,
    )


async def run(
    cfg: BenchConfig, sections: tuple[str, ...], postgres_dsn: str | None
) -> tuple[Report, str]:
    keys = f"bench:{Sealer.new_key_b64()}"
    with (
        tempfile.TemporaryDirectory(prefix="agentrt-bench-") as tmp,
        bench_database(Path(tmp), postgres_dsn) as url,
    ):
        work = Path(tmp)

        def make_settings() -> Settings:
            return bench_settings(database_url=url, seal_keys=keys, data_dir=work)

        report = Report()
        shared = tuple(s for s in sections if s in ON_SHARED_SERVER)
        if shared:
            print("tuned dev server (core.devserver.extra_args):", file=sys.stderr, flush=True)
            db_file = work / "temporal-main.db" if cfg.persist else None
            async with dev_server(extra_args(), db_file=db_file) as client:
                report.extend(await run_shared(client, make_settings(), cfg, shared))
        if "memory" in sections:
            print("memory (own dev server):", file=sys.stderr, flush=True)
            report.extend(await memory.measure(cfg, make_settings()))
        if "devserver" in sections:
            print("dev server tuning:", file=sys.stderr, flush=True)
            report.extend(tuning.tables(await tuning.measure(cfg, make_settings, work), cfg))
        if "load" in sections:
            print("load (the operator API and workers as processes):", file=sys.stderr, flush=True)
            report.extend(await load.measure(cfg, make_settings))
        return report, describe(url)


def _row(table: Table, measure: str, value: str, target: str, ok: bool | None) -> None:
    table.rows.append([measure, value, target, "" if ok is None else verdict(ok)])


def _sql_rows(table: Table, f: dict[str, float]) -> None:
    """Issue 45's targets: the runtime's own SQL statements and commits per agent run."""
    for key in sorted(k for k in f if k.startswith("loop.k") and k.endswith(".statements")):
        k = int(key.split(".")[1][1:])
        bounds = SQL_TARGETS.get(k)
        for i, what in enumerate(("statements", "commits")):
            v, bound = f[f"loop.k{k}.{what}"], bounds[i] if bounds else None
            _row(table, f"SQL {what} per agent run, k={k}", f"{v:g}",
                 f"<= {bound}" if bound else "-", v <= bound if bound else None)  # fmt: skip


def _storeless_rows(table: Table, f: dict[str, float]) -> None:
    """Issue 26's and 45's targets: the agent against the storeless loop (the samples'
    loop)."""
    for key in sorted(k for k in f if k.startswith("storeless.k") and k.endswith(".ratio")):
        k = int(key.split(".")[1][1:])
        target = STORELESS.idle.get(k)
        _row(table, f"agent/storeless loop wall time, k={k}", times(f[key]),
             f"<= {target}" if target else "-", f[key] <= target if target else None)  # fmt: skip
    if "storeless.sat.throughput_ratio" in f:
        tput, cpu = f["storeless.sat.throughput_ratio"], f["storeless.sat.worker_cpu_ratio"]
        _row(table, "saturation throughput agent/storeless loop", times(tput),
             f">= {STORELESS.throughput}", tput >= STORELESS.throughput)  # fmt: skip
        _row(table, "saturation CPU per run agent/storeless loop, worker", times(cpu),
             f"<= {STORELESS.cpu}", cpu <= STORELESS.cpu)  # fmt: skip
        _row(table, "saturation CPU per run agent/storeless loop, server",
             times(f["storeless.sat.server_cpu_ratio"]), "-", None)  # fmt: skip


def headline(report: Report) -> Table:
    """Every target of issues 12, 26 and 45 next to its measured value."""
    f = report.figures
    table = Table("Headline (issue 12, 26 and 45 targets)", ["measure", "value", "target", ""])
    for k, target in PERSISTENT.idle.items():
        if f"loop.k{k}.ratio" in f:
            v = f[f"loop.k{k}.ratio"]
            _row(table, f"agent/hand-written loop wall time, k={k}", times(v), f"<= {target}",
                 v <= target)  # fmt: skip
    for key in sorted(k for k in f if k.startswith("loop.k") and k.endswith(".ratio")):
        k = int(key.split(".")[1][1:])
        if k not in PERSISTENT.idle:
            _row(table, f"agent/hand-written loop wall time, k={k}", times(f[key]), "-", None)
    if "loop.sat.throughput_ratio" in f:
        v = f["loop.sat.throughput_ratio"]
        _row(table, "saturation throughput agent/loop", times(v),
             f">= {PERSISTENT.throughput}", v >= PERSISTENT.throughput)  # fmt: skip
        for part in ("worker", "server"):
            v = f[f"loop.sat.{part}_cpu_ratio"]
            _row(table, f"saturation CPU per run agent/loop, {part}", times(v),
                 f"<= {PERSISTENT.cpu}", v <= PERSISTENT.cpu)  # fmt: skip
    _storeless_rows(table, f)
    _sql_rows(table, f)
    if "memory.agent_mb_at_1000" in f:
        v = f["memory.agent_mb_at_1000"]
        _row(table, "worker RSS, 1000 runs waiting for approval",
             f"{v:.0f} MB ({f['memory.agent_kb_per_run']:.0f} kB/run; loop "
             f"{f['memory.loop_kb_per_run']:.0f} kB/run)",
             f"< {memory.TARGET_MB} MB", v < memory.TARGET_MB)  # fmt: skip
    if "history.bytes_per_model_call.last_over_first" in f:
        first = f["history.bytes_per_model_call.first"]
        last = f["history.bytes_per_model_call.last"]
        growth = f["history.bytes_per_model_call.last_over_first"]
        _row(table, "history bytes/model call, first -> last",
             f"{first:.0f} -> {last:.0f} ({times(growth)})", "<= 2500, flat",
             max(first, last) <= 2500 and growth <= 1.05)  # fmt: skip
    if "fence.extra_ms" in f:
        _row(table, "fence extra time per write",
             f"+{ms(f['fence.extra_ms'])} ms ({times(f['fence.ratio'])})", "-", None)  # fmt: skip
        # Against the unfenced write (tool.execute): the stamp's round trips, and what the
        # write activity spends over the tool activity (the claim, against its ledger check).
        stamp = f["fence.stamp_round_trips"]
        inside = f["fence.write_round_trips"] - f["fence.tool_round_trips"]
        _row(table, "fence extra DB round trips per write",
             f"{stamp + inside:.0f} (stamp {stamp:.0f}, write.execute {inside:+.0f} "
             "against tool.execute)", "<= 1", stamp + inside <= 1)  # fmt: skip
        acts, tasks = f["fence.extra_activities"], f["fence.extra_workflow_tasks"]
        _row(table, "fence extra Temporal work per write",
             f"{acts:.0f} activity (fence.stamp) + {tasks:.0f} workflow task (histories)",
             "1 activity", acts <= 1 and tasks <= 0)  # fmt: skip
    for key in sorted(k for k in f if k.startswith("overhead.") and k.endswith(".ratio")):
        k = key.split(".")[1]
        _row(table, f"agent/bare workflow latency, k={k[1:]}", times(f[key]), "<= 1.15",
             f[key] <= 1.15)  # fmt: skip
    if "parallel.tools_ratio" in f:
        v = f["parallel.tools_ratio"]
        _row(table, f"turn of {parallel.CALLS} parallel {TOOL_MS} ms reads: its tools "
             f"/ one call (one by one: {times(f['parallel.one_by_one_tools_ratio'])})",
             times(v), f"< {parallel.TARGET}", v < parallel.TARGET)  # fmt: skip
        _row(table, f"agent ({parallel.CALLS} reads at once)/hand-written loop (one by one) "
             "wall time", times(f["parallel.run_ratio"]), "-", None)  # fmt: skip
    if "devserver.stock.per_activity_ms" in f:
        _row(table, "dev server ms per activity, stock -> tuned",
             f"{ms(f['devserver.stock.per_activity_ms'])} -> "
             f"{ms(f['devserver.tuned.per_activity_ms'])}", "lower", None)  # fmt: skip
    return table


def _temporal_version() -> str:
    try:
        out = subprocess.run(
            [temporal_cli(), "--version"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def markdown(report: Report, cfg: BenchConfig, database: str, seconds: float) -> str:
    sizes = ", ".join(
        f"{f.name}={v}" for f, v in zip(fields(cfg), asdict(cfg).values(), strict=True)
    )
    lines = [
        "# Benchmark results",
        "",
        f"- when: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"- machine: {os.cpu_count()} CPUs, {platform.platform()}, Python "
        f"{platform.python_version()}",
        f"- temporal: {_temporal_version()}; dev server "
        f"{'with file persistence' if cfg.persist else 'in memory'}",
        f"- database: {database}",
        f"- sizes: {sizes}",
        f"- wall time: {seconds:.0f} s",
        "",
    ]
    for table in [headline(report), *report.tables]:
        lines += [table.markdown(), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["fuzz"]:  # `python -m bench fuzz`: the fuzz job (bench/fuzz.py)
        from bench import fuzz

        fuzz.main(args[1:])
        return
    ns = parse(argv)
    cfg = config_from(ns)
    sections = tuple(s.strip() for s in ns.sections.split(",") if s.strip())
    unknown = set(sections) - set(ALL_SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections: {', '.join(sorted(unknown))}")
    postgres = ns.postgres or ns.db == "postgres"
    postgres_dsn = Settings().database.postgres_dsn if postgres else None
    ns.out.parent.mkdir(parents=True, exist_ok=True)

    def once(out: Path, *, all_tables: bool = True) -> None:
        started = time.monotonic()
        report, database = asyncio.run(run(cfg, sections, postgres_dsn))
        seconds = time.monotonic() - started
        for table in [headline(report), *report.tables] if all_tables else [headline(report)]:
            print(table.text(), end="\n\n")
        out.write_text(markdown(report, cfg, database, seconds))
        print(f"wrote {out} ({seconds:.0f} s)")

    if ns.repeat <= 1:
        once(ns.out)
        return
    lines = repeat.repeat(ns.repeat, ns.out, lambda out: once(out, all_tables=False))
    print("\n".join(lines))
    print(f"wrote {repeat.medians_file(ns.out)}")
