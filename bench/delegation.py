"""Delegation: one read-only tool call made by a child agent (a child workflow of the run,
issue 43) against the same call made inline, runs interleaved one by one.

- `inline`: a `bench-read` run: a model call asks for `lookup_order`, the tool runs, a
  model call answers (2 model calls, 1 tool call).
- `child`: a `bench-delegate` run: a model call asks for the child `bench-child`, whose own
  run asks for `lookup_order` and answers, then the parent's model call answers (4 model
  calls, 1 tool call, 2 workflows).

Per pair of runs: the wall time from the client (start to result), this process's CPU
(the worker and the client: the bench runs its worker in-process) and, from the parent's
history on the server's clock, the call step (the model call that asked for it completed
-> the next model call scheduled). The ratios child/inline are reported with their spread
(median, min, max over the pairs). Issue 43's target: a child call costs at most 1.3x the
same tool called inline, wall time and worker CPU.
"""

import asyncio
import os
import statistics
import sys
from dataclasses import dataclass, field

from agentrt.contracts.ids import ACT_MODEL_COMPLETE
from agentrt.store.runs.record import RunStore
from bench.config import BenchConfig
from bench.drive import BenchError, agent_run
from bench.harness import Bench
from bench.histories import fetch_facts
from bench.procstat import cpu_seconds
from bench.report import Report, Table, ms
from bench.stats import Summary

TARGET = 1.3
KINDS = {
    "inline": ("bench-read", "bench inline read"),
    "child": ("bench-delegate", "bench delegate read"),
}
CHILDREN = {"inline": 0, "child": 1}


@dataclass
class Samples:
    wall: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    step: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def ratios(self, what: dict[str, list[float]]) -> list[float]:
        return [c / i for c, i in zip(what["child"], what["inline"], strict=True) if i > 0]


async def _once(bench: Bench, kind: str, into: Samples) -> str:
    profile, prompt = KINDS[kind]
    cpu = cpu_seconds(os.getpid())
    wall, result = await agent_run(bench, profile, prompt)
    into.cpu[kind].append((cpu_seconds(os.getpid()) - cpu) * 1000)
    into.wall[kind].append(wall)
    children = (await asyncio.to_thread(RunStore(bench.parts.ctx).get, result.run_id)).children  # type: ignore[union-attr]
    if result.iterations != 2 or len(children) != CHILDREN[kind]:
        raise BenchError(f"{kind} run {result.run_id}: {result.iterations} rounds, {children}")
    return result.run_id


async def _step_ms(bench: Bench, run_id: str) -> float:
    """The call's step on the server's clock: first model call completed -> second scheduled."""
    spans = [s for s in (await fetch_facts(bench.client, run_id)).spans
             if s.activity_type == ACT_MODEL_COMPLETE]  # fmt: skip
    if len(spans) != 2:
        raise BenchError(f"run {run_id} made {len(spans)} model calls in its workflow, not 2")
    return (spans[1].scheduled_ns - spans[0].completed_ns) / 1e6


async def measure(bench: Bench, cfg: BenchConfig) -> Report:
    print("  delegation: child call vs inline tool call", file=sys.stderr, flush=True)
    samples = Samples()
    for _ in range(cfg.warmup):
        for kind in KINDS:
            await _once(bench, kind, Samples())
    ids: dict[str, list[str]] = {k: [] for k in KINDS}
    order = list(KINDS)
    for _ in range(cfg.runs):  # interleaved, the order reversed each pair: drift hits both
        for kind in order:
            ids[kind].append(await _once(bench, kind, samples))
        order.reverse()
    for kind, run_ids in ids.items():  # read after the timed runs: delays none of them
        for run_id in run_ids:
            samples.step[kind].append(await _step_ms(bench, run_id))
    return tables(samples)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def tables(samples: Samples) -> Report:
    report = Report()
    rows = []
    for name, what in (
        ("wall time, client (ms)", samples.wall),
        ("this process's CPU: worker + client (ms)", samples.cpu),
        ("the call's step, server clock (ms)", samples.step),
    ):
        inline, child = Summary.of(what["inline"]), Summary.of(what["child"])
        ratios = samples.ratios(what)
        rows.append([name, str(inline.n), ms(inline.p50), ms(child.p50), _spread(ratios)])
    report.tables.append(
        Table(
            "Delegation: one read by a child agent vs inline (medians; ratio median (min-max))",
            ["measure", "pairs", "inline", "child", "child/inline"],
            rows,
            [
                "inline: model -> lookup_order -> model. child: model -> child run (model -> "
                "lookup_order -> model) -> model.",
                f"Issue 43's target: child/inline <= {TARGET} in wall time and worker CPU.",
            ],
        )
    )
    for key, what in (("wall", samples.wall), ("cpu", samples.cpu), ("step", samples.step)):
        ratios = samples.ratios(what)
        report.figures[f"delegation.{key}_ratio"] = statistics.median(ratios)
        report.figures[f"delegation.{key}_ratio_min"] = min(ratios)
        report.figures[f"delegation.{key}_ratio_max"] = max(ratios)
    return report
