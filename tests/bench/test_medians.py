"""bench.medians reads the headline tables the bench writes and takes medians over runs;
bench.repeat (`python -m bench --repeat N`) aggregates its runs' files with it."""

from pathlib import Path

from bench.headline import headline
from bench.medians import aggregate, headline_ratios, headline_values, summary
from bench.repeat import medians_file, repeat, run_file
from bench.report import Report


def _markdown(figures: dict[str, float]) -> str:
    # The same markdown the bench writes for its headline (bench.headline.markdown).
    return "# Benchmark results\n\n" + headline(Report(figures=figures)).markdown()


def _summary_file(tmp_path: Path, name: str, figures: dict[str, float]) -> Path:
    path = tmp_path / name
    path.write_text(_markdown(figures))
    return path


def _figures(
    k3: float, tput: float, statements: float = 18, commits: float = 8
) -> dict[str, float]:
    return {
        "storeless.k3.ratio": k3,
        "storeless.sat.throughput_ratio": tput,
        "storeless.sat.worker_cpu_ratio": 1.5,
        "storeless.sat.server_cpu_ratio": 1.1,
        "loop.k3.statements": statements,
        "loop.k3.commits": commits,
    }


def test_medians_over_runs_judged_against_targets(tmp_path: Path) -> None:
    files = [
        _summary_file(tmp_path, "a.md", _figures(1.2, 0.70)),
        _summary_file(tmp_path, "b.md", _figures(1.1, 0.95)),
        _summary_file(tmp_path, "c.md", _figures(1.12, 0.92)),
    ]
    ratios = headline_ratios(files[0].read_text())
    assert ratios["agent/storeless loop wall time, k=3"] == (1.2, "<= 1.15")
    assert "SQL statements per agent run, k=3" not in ratios  # a count, not a ratio
    lines = summary(files)
    assert lines[0] == "3 runs: median (range), target, verdict of the median, runs that met it"
    assert (
        "agent/storeless loop wall time, k=3: 1.120x (1.10-1.20, n=3) <= 1.15 ok, met 2/3" in lines
    )
    assert (
        "saturation throughput agent/storeless loop: 0.920x (0.70-0.95, n=3) >= 0.9 ok, met 2/3"
        in lines
    )
    worker = "saturation CPU per run agent/storeless loop, worker: 1.500x (1.50-1.50, n=3)"
    assert f"{worker} <= 1.3 OVER, met 0/3" in lines
    # No target: the median without a verdict or a count of runs that met it.
    assert "saturation CPU per run agent/storeless loop, server: 1.100x (1.10-1.10, n=3) -" in lines


def test_counts_aggregate_beside_the_ratios() -> None:
    # Issue 45's SQL targets: statements <= 16 and commits <= 8 per k = 3 agent run.
    runs = [
        headline_values(_markdown(_figures(1.1, 1.0, statements=s, commits=c)))
        for s, c in ((18, 8), (15, 7), (16, 9), (14.5, 7), (20, 10))
    ]
    assert runs[3]["SQL statements per agent run, k=3"] == (14.5, "", "<= 16")
    lines = aggregate(runs)
    assert lines[0].startswith("5 runs:")
    assert "SQL statements per agent run, k=3: 16 (14.5-20, n=5) <= 16 ok, met 3/5" in lines
    assert "SQL commits per agent run, k=3: 8 (7-10, n=5) <= 8 ok, met 3/5" in lines


def test_repeat_writes_a_file_per_run_and_aggregates_them(tmp_path: Path) -> None:
    out = tmp_path / "latest.md"
    k3 = iter([1.3, 1.1, 1.14, 1.2, 1.0])
    written: list[Path] = []

    def once(path: Path) -> None:
        written.append(path)
        path.write_text(_markdown(_figures(next(k3), 0.9)))

    lines = repeat(5, out, once)
    assert written == [run_file(out, i) for i in range(1, 6)]
    assert written[0] == tmp_path / "latest-1.md"
    assert (
        "agent/storeless loop wall time, k=3: 1.140x (1.00-1.30, n=5) <= 1.15 ok, met 3/5" in lines
    )
    assert medians_file(out).read_text().splitlines() == lines
