"""bench.medians reads the headline tables the bench writes and takes medians over runs."""

from pathlib import Path

from bench.cli import headline
from bench.medians import headline_ratios, summary
from bench.report import Report


def _summary_file(tmp_path: Path, name: str, figures: dict[str, float]) -> Path:
    # The same markdown the bench writes for its headline (bench.cli.markdown).
    path = tmp_path / name
    path.write_text("# Benchmark results\n\n" + headline(Report(figures=figures)).markdown())
    return path


def _figures(k3: float, tput: float) -> dict[str, float]:
    return {
        "storeless.k3.ratio": k3,
        "storeless.sat.throughput_ratio": tput,
        "storeless.sat.worker_cpu_ratio": 1.5,
        "storeless.sat.server_cpu_ratio": 1.1,
    }


def test_medians_over_runs_judged_against_targets(tmp_path: Path) -> None:
    files = [
        _summary_file(tmp_path, "a.md", _figures(1.2, 0.70)),
        _summary_file(tmp_path, "b.md", _figures(1.5, 0.90)),
        _summary_file(tmp_path, "c.md", _figures(1.25, 0.85)),
    ]
    ratios = headline_ratios(files[0].read_text())
    assert ratios["agent/storeless loop wall time, k=3"] == (1.2, "<= 1.3")
    lines = summary(files)
    assert lines[0] == "3 runs: median (range), target"
    assert "agent/storeless loop wall time, k=3: 1.250x (1.20-1.50, n=3) <= 1.3 ok" in lines
    assert "saturation throughput agent/storeless loop: 0.850x (0.70-0.90, n=3) >= 0.8 ok" in lines
    worker = "saturation CPU per run agent/storeless loop, worker: 1.500x (1.50-1.50, n=3)"
    assert f"{worker} <= 1.4 OVER" in lines
    # No target: the median without a verdict.
    assert "saturation CPU per run agent/storeless loop, server: 1.100x (1.10-1.10, n=3) -" in lines
