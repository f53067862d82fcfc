"""`python -m bench` (`./dev bench`): run the benchmark, print tables, write a markdown summary.

The entry point: flags and settings are read here and nowhere else in bench/.
"""

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import fields, replace
from pathlib import Path

from agentrt.core.devserver import extra_args
from agentrt.core.settings import Settings
from agentrt.store.db.sealing import Sealer
from bench import load, memory, repeat, tuning
from bench.config import BenchConfig, tiny
from bench.database import bench_database, describe
from bench.harness import RESULTS_DIR, bench_settings, dev_server
from bench.headline import headline, markdown
from bench.load_tally import PROMPTS
from bench.report import Report
from bench.suite import ON_SHARED_SERVER, run_shared

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
        dest="long_history_rounds",
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
    p.add_argument(
        "--full",
        dest="memory_runs",
        action="store_const",
        const=1000,
        help="the issue's sizes: 1000 waiting runs",
    )
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
    """The sizes the flags give: a flag sizes the BenchConfig field of its name. With
    `--tiny`, the smallest sizes, and of the flags only the load section's that are given
    (they default to None: the section's own sizes)."""
    flags = vars(ns)
    given = {f.name: flags[f.name] for f in fields(BenchConfig) if flags.get(f.name) is not None}
    if ns.tiny:
        return replace(tiny(), **{k: v for k, v in given.items() if k.startswith("load_")})
    return BenchConfig(**given)


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
