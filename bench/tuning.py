"""The dev server's tuning: the bare baseline and a timer probe on a stock dev server and on
one started with core.devserver.extra_args() (optionally also without each TUNING key)."""

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentrt.core.devserver import TUNING, extra_args
from agentrt.core.settings import Settings
from bench.config import BenchConfig
from bench.drive import bare_run, timer_run
from bench.harness import dev_server, running_worker
from bench.report import Report, Table, ms, times
from bench.stats import Summary, ratio

TIMERS = 3  # timers per probe run
TIMER_MS = 100  # each timer's duration


@dataclass(frozen=True)
class ServerRow:
    key: str  # short name for the figures
    label: str
    activities: int
    zero: Summary  # runs with no activity: the fixed cost of a workflow
    full: Summary  # runs with `activities` activities
    timer_ms: float  # wall time per TIMER_MS timer, workflow tasks included

    @property
    def per_activity(self) -> float:
        return (self.full.mean - self.zero.mean) / self.activities


def args_without(key: str) -> list[str]:
    args: list[str] = []
    for value in TUNING:
        if value != key:
            args += ["--dynamic-config-value", value]
    return args


async def measure_server(
    key: str,
    label: str,
    args: list[str],
    settings: Settings,
    cfg: BenchConfig,
    db_file: Path | None,
) -> ServerRow:
    print(f"  dev server: {label}", file=sys.stderr, flush=True)
    n = cfg.server_activities
    async with (
        dev_server(args, db_file=db_file) as client,
        running_worker(client, settings) as bench,
    ):
        for _ in range(cfg.warmup):
            await bare_run(bench, 0)
            await bare_run(bench, n)
        zero: list[float] = []
        full: list[float] = []
        for _ in range(cfg.server_runs):
            zero.append(await bare_run(bench, 0))
            full.append(await bare_run(bench, n))
        timers = [await timer_run(bench, TIMERS, TIMER_MS) / TIMERS for _ in range(cfg.timer_runs)]
    return ServerRow(key, label, n, Summary.of(zero), Summary.of(full), sum(timers) / len(timers))


async def measure(
    cfg: BenchConfig, make_settings: Callable[[], Settings], work_dir: Path
) -> list[ServerRow]:
    configs = [("stock", "stock", []), ("tuned", "tuned (extra_args)", extra_args())]
    if cfg.ablate:
        configs += [
            (f"without:{key.split('=')[0]}", f"tuned without {key}", args_without(key))
            for key in TUNING
        ]
    rows: list[ServerRow] = []
    for i, (key, label, args) in enumerate(configs):
        db_file = work_dir / f"temporal-{i}.db" if cfg.persist else None
        rows.append(await measure_server(key, label, args, make_settings(), cfg, db_file))
    return rows


def tables(rows: list[ServerRow], cfg: BenchConfig) -> Report:
    n = cfg.server_activities
    table = Table(
        "Dev server: stock vs tuned (bare baseline, sequential)",
        [
            "server",
            "0-activity run ms",
            "per activity ms",
            f"{n}-activity run mean",
            "p50",
            "p95",
            "vs stock",
            f"{TIMER_MS} ms timer takes",
        ],
    )
    report = Report([table])
    stock = rows[0]
    for r in rows:
        table.rows.append(
            [
                r.label,
                ms(r.zero.mean),
                ms(r.per_activity),
                ms(r.full.mean),
                ms(r.full.p50),
                ms(r.full.p95),
                times(ratio(r.full.mean, stock.full.mean)),
                ms(r.timer_ms),
            ]
        )
        report.figures[f"devserver.{r.key}.fixed_ms"] = r.zero.mean
        report.figures[f"devserver.{r.key}.per_activity_ms"] = r.per_activity
        report.figures[f"devserver.{r.key}.timer_ms"] = r.timer_ms
    mode = "file persistence" if cfg.persist else "in memory"
    table.notes += [
        f"Each server is fresh, {mode}, with the same worker; n={cfg.server_runs} runs each.",
        "per activity = (n-activity run - 0-activity run) / n.",
        f"timer: a workflow sleeping {TIMERS} x {TIMER_MS} ms; wall time per timer, "
        "including the workflow task that each firing wakes.",
        "TUNING (core/devserver.py): " + ", ".join(TUNING),
    ]
    return report
