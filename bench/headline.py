"""The bench's verdicts: the headline table (every target of issues 12, 26 and 45 beside
its measured value) and the markdown summary `python -m bench` writes (bench/cli.py)."""

import os
import platform
import subprocess
from dataclasses import asdict, fields
from datetime import UTC, datetime

from agentrt.core.devserver import temporal_cli
from bench import memory, parallel
from bench.config import BenchConfig
from bench.report import Report, Table, ms, times, verdict
from bench.slow_tools import TOOL_MS
from bench.versus_report import PERSISTENT, SQL_TARGETS, STORELESS


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
