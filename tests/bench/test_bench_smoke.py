"""The benchmark executes end to end at a tiny size on the test dev server.

No timing is asserted: speed targets belong to the benchmark, never to a timed unit test.
Every run the benchmark starts is checked by the benchmark itself (completed, with the
expected number of rounds, tool calls, model calls and ledger rows), so numbers appear only
when the runs did what they should.
"""

import dataclasses
import math
from pathlib import Path

from temporalio.client import Client

from agentrt.core.settings import Settings
from bench.cli import headline
from bench.config import tiny
from bench.harness import bench_settings
from bench.suite import SHARED_SECTIONS, run_shared


async def test_benchmark_produces_every_figure(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    # 21 rounds also exercises the bench-only raised iteration ceiling.
    cfg = dataclasses.replace(tiny(), long_history_rounds=21)
    bench = bench_settings(
        database_url=settings.resolved_database_url(),
        seal_keys=settings.read_seal_keys(),
        data_dir=tmp_path,
    )

    report = await run_shared(client, bench, cfg, SHARED_SECTIONS)

    for key in [
        "overhead.k1.ratio",
        "overhead.k1.ratio_db",
        "overhead.k1.agent_rps",
        "overhead.k1.bare_rps",
        "history.bytes_per_model_call.last_over_first",
        "history.marginal_spread",
        "fence.extra_ms",
        "fence.ratio",
    ]:
        assert key in report.figures, key
        assert math.isfinite(report.figures[key]), key
    assert report.figures["history.bytes_per_model_call.first"] > 0
    assert all(table.rows for table in report.tables)
    assert headline(report).rows
    assert "| k |" in report.tables[0].markdown()
