"""The benchmark, at CI size, on the test dev server.

test_benchmark_produces_every_figure runs in the normal suite and asserts no timing: speed
targets never belong to a timed unit test. Every run the benchmark starts is checked by the
benchmark itself (completed, with the expected rounds, tool calls, model calls and ledger
rows), so numbers appear only when the runs did what they should.

test_ratios_within_limits is the bench smoke run: timed, so it runs only when
AGENTRT_BENCH_SMOKE=1 (`./dev bench-smoke`), never in `./dev test` or .ci/run. It fails when
a ratio against the hand-written loop passes its limit (bench/smoke.py) by more than the
noise measured for it. It also prints the ratios against the storeless loop next to issue
26's targets, without asserting them (bench/smoke.py REPORTED: today's code misses them).
"""

import dataclasses
import math
import os
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt.core.settings import Settings
from bench.config import BenchConfig, tiny
from bench.harness import bench_settings
from bench.headline import headline
from bench.smoke import LIMITS, REPORTED
from bench.suite import SHARED_SECTIONS, run_shared


def _bench_settings(settings: Settings, tmp_path: Path) -> Settings:
    return bench_settings(
        database_url=settings.database.resolved_url(),
        seal_keys=settings.read_seal_keys(),
        data_dir=tmp_path,
    )


async def test_benchmark_produces_every_figure(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    # 21 rounds also exercises the bench's raised iteration ceiling (its setting).
    cfg = dataclasses.replace(tiny(), long_history_rounds=21)
    report = await run_shared(client, _bench_settings(settings, tmp_path), cfg, SHARED_SECTIONS)

    for key in [
        "loop.k1.ratio",
        "loop.sat.throughput_ratio",
        "loop.sat.worker_cpu_ratio",
        "loop.sat.server_cpu_ratio",
        "storeless.k1.ratio",
        "storeless.sat.throughput_ratio",
        "storeless.sat.worker_cpu_ratio",
        "storeless.sat.server_cpu_ratio",
        "overhead.k1.ratio",
        "overhead.k1.ratio_db",
        "overhead.k1.agent_rps",
        "overhead.k1.bare_rps",
        "history.bytes_per_model_call.last_over_first",
        "history.marginal_spread",
        "fence.ratio",
        "delegation.wall_ratio",
        "delegation.cpu_ratio",
        "delegation.step_ratio",
        "parallel.tools_ratio",
        "parallel.one_by_one_tools_ratio",
        "parallel.run_ratio",
        "long.ratio",
        "long.largest_segment_bytes",
        "long.loop_bytes",
    ]:
        assert key in report.figures, key
        assert math.isfinite(report.figures[key]) and report.figures[key] > 0, key
    # A difference of two timed means: with the tiny sizes one stalled unfenced step can make
    # it negative (-171 ms once in CI), and no unit test asserts on time.
    assert math.isfinite(report.figures["fence.extra_ms"])
    assert report.figures["history.bytes_per_model_call.first"] > 0
    # tiny: 6 tool calls, a segment every 3 rounds (checked by the section: 7 model calls).
    assert report.figures["long.segments"] == 2
    # PostgreSQL's own CPU is read from its processes; SQLite runs inside the worker.
    on_postgres = settings.database.resolved_url().startswith("postgresql")
    for key in ("loop.sat.database_cpu_ratio", "storeless.sat.database_cpu_ratio"):
        assert (key in report.figures) is on_postgres, key
        if on_postgres:  # /proc counts 10 ms ticks: 4 runs a burst here may read 0 (NaN, 0)
            value = report.figures[key]
            assert math.isnan(value) or value >= 0, key
    # Counted in the histories, so exact: the stamp is a local activity in the workflow task
    # that schedules the write, so the fence adds no activity and no workflow task.
    assert report.figures["fence.extra_activities"] == 0
    assert report.figures["fence.extra_workflow_tasks"] == 0
    assert all(table.rows for table in report.tables)
    # Issue 45: the runtime's own SQL statements and commits per agent run, beside the
    # ratios (tiny: k = 1). The agent's are never none (begin, turns, the write's fence).
    assert report.figures["loop.k1.statements"] > 0
    assert 0 < report.figures["loop.k1.commits"] <= report.figures["loop.k1.statements"]
    for key in ("storeless.k1.statements", "storeless.k1.commits"):
        assert report.figures[key] >= 0, key
    idle = report.tables[0]
    column = idle.headers.index("agent SQL stmts / commits per run")
    assert idle.headers.index("agent/storeless (p50)") < column
    statements, commits = report.figures["loop.k1.statements"], report.figures["loop.k1.commits"]
    assert idle.rows[0][column] == f"{statements:g} / {commits:g}"
    rows = headline(report).rows
    assert any(r[0] == "SQL statements per agent run, k=1" for r in rows)
    assert any(r[0] == "agent/hand-written loop wall time, k=1" for r in rows)
    assert any(r[0] == "agent/storeless loop wall time, k=1" for r in rows)
    assert "| k |" in report.tables[0].markdown()


SMOKE = BenchConfig(runs=8, warmup=2, tools=(1, 3), burst=30, burst_reps=1)


@pytest.mark.skipif(
    os.environ.get("AGENTRT_BENCH_SMOKE") != "1", reason="timed: ./dev bench-smoke runs it"
)
@pytest.mark.timeout(900)
async def test_ratios_within_limits(client: Client, settings: Settings, tmp_path: Path) -> None:
    report = await run_shared(client, _bench_settings(settings, tmp_path), SMOKE, ("loop",))
    lines = []
    failed = []
    for limit in LIMITS:
        value = report.figures[limit.figure]
        ok = limit.passes(value)
        sign = ">=" if limit.higher_is_better else "<="
        lines.append(f"{limit.figure}: {value:.2f} (limit {sign} {limit.bound:.2f}, "
                     f"target {limit.target}) {'ok' if ok else 'REGRESSED'}")  # fmt: skip
        if not ok:
            failed.append(limit.figure)
    for target in REPORTED:  # issue 26: reported against the target, not asserted
        value = report.figures[target.figure]
        sign = ">=" if target.higher_is_better else "<="
        met = "ok" if target.met(value) else "OVER (reported, not asserted)"
        lines.append(f"{target.figure}: {value:.2f} (target {sign} {target.target}) {met}")
    print("\n".join(lines))
    assert not failed, "\n".join(lines)
