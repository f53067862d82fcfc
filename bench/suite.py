"""The sections that share one dev server and one worker (loop, overhead, history, fence,
delegation),
and the parallel and long-run sections, on the same dev server with a worker each of their
own."""

import sys

from temporalio.client import Client

from agentrt.core.settings import Settings
from bench import delegation, fence, history, long_run, overhead, parallel, remote_call, versus
from bench.config import BenchConfig
from bench.harness import running_worker
from bench.report import Report

SHARED_SECTIONS = ("loop", "overhead", "history", "fence", "delegation", "parallel", "long")
# On the same dev server too, but not in the bench smoke test (tests/bench), which runs
# SHARED_SECTIONS: starting the remote agentrt's API process alone takes about 12 s there.
ON_SHARED_SERVER = (*SHARED_SECTIONS, "remote")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def run_shared(
    client: Client, settings: Settings, cfg: BenchConfig, sections: tuple[str, ...]
) -> Report:
    report = Report()
    async with running_worker(client, settings) as bench:
        if "loop" in sections:
            report.extend(await versus.measure(bench, cfg))
        if "overhead" in sections:
            report.extend(await overhead.measure(bench, cfg))
        if "history" in sections:
            _progress("  history growth")
            report.extend(
                history.tables(
                    await history.measure(bench, cfg.history_rounds, cfg.long_history_rounds)
                )
            )
        if "fence" in sections:
            _progress("  fence overhead")
            report.extend(fence.tables(*await fence.measure(bench, cfg.fence_runs)))
        if "delegation" in sections:
            report.extend(await delegation.measure(bench, cfg))
    if "remote" in sections:
        report.extend(await remote_call.measure(client, settings, cfg))
    if "parallel" in sections:
        report.extend(await parallel.measure(client, settings, cfg))
    if "long" in sections and cfg.long_calls:
        report.extend(await long_run.measure(client, settings, cfg))
    return report
