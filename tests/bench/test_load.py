"""The load section's own parts: the dev server's histogram read as Prometheus reads it,
and a level across a SIGKILL of the operator API (its processes as deployed): the clients
resend, resume and decide again, and nothing is lost or duplicated."""

import dataclasses
from pathlib import Path

import pytest

from agentrt.core.settings import Settings
from bench import load
from bench.config import tiny
from bench.harness import bench_settings
from bench.load_probe import histogram_percentile, requests_between

INF = float("inf")


def test_a_percentile_of_the_requests_between_two_scrapes() -> None:
    before = {0.01: 5.0, 0.1: 5.0, 1.0: 5.0, INF: 5.0}
    # 100 more: 50 under 10 ms, 40 in (10, 100] ms, 10 in (100 ms, 1 s]
    after = {0.01: 55.0, 0.1: 95.0, 1.0: 105.0, INF: 105.0}
    assert requests_between(before, after) == 100
    assert histogram_percentile(before, after, 50) == pytest.approx(0.01)
    assert histogram_percentile(before, after, 70) == pytest.approx(0.01 + 0.09 * 20 / 40)
    assert histogram_percentile(before, after, 95) == pytest.approx(0.1 + 0.9 * 5 / 10)
    assert histogram_percentile(before, before, 95) is None  # none between


@pytest.mark.parametrize("profile", ["bench-load", "bench-load-parallel"])
async def test_a_level_loses_nothing_across_an_api_sigkill(
    settings: Settings, tmp_path: Path, profile: str
) -> None:
    """With bench-load-parallel, three reads finish in the reverse of their order beside the
    refund: events commit out of sequence order (issue 40 item 1), and still none is lost
    or seen twice by a follower resuming across the kill."""
    cfg = dataclasses.replace(
        tiny(), load_runs=24, load_starts=4, load_followers=8, load_kill_api=1.0,
        load_profile=profile,
    )  # fmt: skip

    def make_settings() -> Settings:
        return bench_settings(
            database_url=settings.database.resolved_url(),
            seal_keys=settings.read_seal_keys(),
            data_dir=tmp_path,
        )

    report = await load.measure(cfg, make_settings)
    figures = report.figures
    assert figures["load.1x.api_kills"] == 1, report.tables
    assert figures["load.1x.unanswered"] > 0  # the clients met the kill
    summary = [t.rows for t in report.tables if t.title.startswith("Load: runs")]
    assert (figures["load.1x.lost"], figures["load.1x.duplicated"]) == (0, 0), summary
    if profile == "bench-load-parallel":
        assert figures["load.1x.late_events"] > 0, summary  # the follows met late events
