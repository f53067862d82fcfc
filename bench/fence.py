"""Fence overhead: a fenced non-idempotent write (fence.stamp, a local activity, then
write.execute) against an unfenced idempotent write (one tool.execute), alternating within
the same runs.

A write step is timed on the server's clock, from the completion of the model call that
asked for the write to the scheduling of the next model call: everything the loop spends
on the write, workflow tasks included.
"""

import asyncio
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentrt.contracts.ids import (
    ACT_FENCE_STAMP,
    ACT_MODEL_COMPLETE,
    ACT_TOOL_EXECUTE,
    ACT_WRITE_EXECUTE,
)
from agentrt.store.demo import DemoWorld
from bench.drive import BenchError, agent_run
from bench.harness import Bench
from bench.histories import HistoryFacts, fetch_facts
from bench.report import Report, Table, ms, times
from bench.sqlcount import COLUMN, SqlTally, counting
from bench.stats import Summary, ratio

PROFILE = "bench-writes"
PROMPT = "bench writes"  # 4 x set_record (unfenced) and 4 x issue_refund (fenced), alternating
FENCED_PER_RUN = 4


@dataclass
class Samples:
    unfenced: list[float] = field(default_factory=list)
    fenced: list[float] = field(default_factory=list)
    tool: list[float] = field(default_factory=list)  # tool.execute, scheduled -> completed
    stamp: list[float] = field(default_factory=list)  # fence.stamp
    between: list[float] = field(default_factory=list)  # stamp completed -> write scheduled
    write: list[float] = field(default_factory=list)  # write.execute
    # Temporal work per step, counted in the history: (activities, workflow tasks)
    fenced_work: list[tuple[int, int]] = field(default_factory=list)
    unfenced_work: list[tuple[int, int]] = field(default_factory=list)

    def extra_work(self) -> tuple[float, float]:
        """What a fenced step costs over an unfenced one: activities, workflow tasks."""
        return (
            _mean(w[0] for w in self.fenced_work) - _mean(w[0] for w in self.unfenced_work),
            _mean(w[1] for w in self.fenced_work) - _mean(w[1] for w in self.unfenced_work),
        )


def _mean(values: Iterable[int]) -> float:
    items = list(values)
    return sum(items) / len(items)


def collect(facts: HistoryFacts, into: Samples) -> None:
    spans = facts.spans
    models = [i for i, s in enumerate(spans) if s.activity_type == ACT_MODEL_COMPLETE]
    for a, b in itertools.pairwise(models):
        inner = {s.activity_type: s for s in spans[a + 1 : b]}
        step = (spans[b].scheduled_ns - spans[a].completed_ns) / 1e6
        # The step's workflow tasks: from the one that saw the model call's completion to
        # the one that scheduled the next model call.
        first, last = spans[a].completed_id, spans[b].scheduled_id
        work = (b - a - 1, sum(1 for t in facts.task_ids if first < t < last))
        if ACT_WRITE_EXECUTE in inner:
            write = inner[ACT_WRITE_EXECUTE]
            into.fenced.append(step)
            into.write.append(write.ms)
            into.fenced_work.append(work)
            # The stamp is a local activity (no span) since the fence-local-stamp patch.
            stamp = inner.get(ACT_FENCE_STAMP)
            if stamp is not None:
                into.stamp.append(stamp.ms)
                into.between.append((write.scheduled_ns - stamp.completed_ns) / 1e6)
        elif ACT_TOOL_EXECUTE in inner:
            into.unfenced.append(step)
            into.unfenced_work.append(work)
            into.tool.append(inner[ACT_TOOL_EXECUTE].ms)


async def measure(bench: Bench, runs: int) -> tuple[Samples, SqlTally]:
    samples = Samples()
    world = DemoWorld(bench.parts.ctx)
    await agent_run(bench, PROFILE, PROMPT)  # warm-up, uncounted
    with counting(bench.parts.engine) as tally:
        for _ in range(runs):
            _, result = await agent_run(bench, PROFILE, PROMPT)
            ledger = await asyncio.to_thread(world.ledger_count, run_id=result.run_id)
            if ledger != FENCED_PER_RUN:
                raise BenchError(f"run {result.run_id} wrote {ledger} ledger rows, not 4")
            collect(await fetch_facts(bench.client, result.run_id), samples)
    if len(samples.fenced) != runs * FENCED_PER_RUN or not samples.unfenced:
        raise BenchError("the write runs did not alternate fenced and unfenced writes")
    return samples, tally


def tables(samples: Samples, tally: SqlTally) -> Report:
    unfenced, fenced = Summary.of(samples.unfenced), Summary.of(samples.fenced)
    extra = fenced.mean - unfenced.mean
    steps = Table(
        "Fence overhead: one write step (ms)",
        ["write", "activities", "n", "mean", "p50", "p95", "activities / workflow tasks"],
        [
            [
                "set_record, idempotent, unfenced",
                "tool.execute",
                str(unfenced.n),
                ms(unfenced.mean),
                ms(unfenced.p50),
                ms(unfenced.p95),
                _work(samples.unfenced_work),
            ],
            [
                "issue_refund, non-idempotent, fenced",
                "fence.stamp + write.execute",
                str(fenced.n),
                ms(fenced.mean),
                ms(fenced.p50),
                ms(fenced.p95),
                _work(samples.fenced_work),
            ],
        ],
    )
    write, tool = Summary.of(samples.write), Summary.of(samples.tool)
    if samples.stamp:  # a scheduled stamp, and the workflow task that takes its result
        stamp_rows = [
            ["fence.stamp", ms(Summary.of(samples.stamp).mean), tally.shown(ACT_FENCE_STAMP)],
            ["workflow task between stamp and write", ms(Summary.of(samples.between).mean), "-"],
        ]
    else:
        stamp_rows = [["fence.stamp (local, in the write's workflow task)", "-",
                       tally.shown(ACT_FENCE_STAMP)]]  # fmt: skip
    parts = Table(
        "Fence overhead: where the time goes (mean ms; SQL per execution)",
        ["piece", "mean ms", COLUMN],
        [
            ["tool.execute (set_record)", ms(tool.mean), tally.shown(ACT_TOOL_EXECUTE)],
            *stamp_rows,
            ["write.execute (issue_refund)", ms(write.mean), tally.shown(ACT_WRITE_EXECUTE)],
        ],
    )
    extra_activities, extra_tasks = samples.extra_work()
    steps.notes += [
        f"fence overhead: {times(ratio(fenced.mean, unfenced.mean))}, +{extra:.1f} ms per write; "
        f"{extra_activities:+.0f} activity and {extra_tasks:+.0f} workflow task (counted in "
        "the histories), and the claim inside write.execute.",
        "fence.stamp is one statement that checks the dedup ledger and stamps the run row, "
        "run as a local activity in the workflow task that schedules the write; the claim "
        "is one guarded UPDATE.",
        "A step runs from the completion of the model call asking for the write to the "
        "scheduling of the next model call, on the server's clock (history timestamps); its "
        "workflow tasks are the one that saw that completion, up to the one that scheduled "
        "the next model call.",
    ]
    parts.notes.append(
        "Statements include SQLite's explicit BEGIN IMMEDIATE; commits count durable writes "
        "(a transaction's, or one statement's in autocommit); round trips as bench/sqlcount.py "
        "counts them (on SQLite a transaction is one). The tools' own I/O is not counted. "
        "Activity times run from scheduling to completion."
    )
    stamp_statements, stamp_commits, stamp_trips = tally.per_execution(ACT_FENCE_STAMP)
    return Report(
        [steps, parts],
        {
            "fence.unfenced_ms": unfenced.mean,
            "fence.fenced_ms": fenced.mean,
            "fence.extra_ms": extra,
            "fence.ratio": ratio(fenced.mean, unfenced.mean),
            "fence.extra_activities": extra_activities,
            "fence.extra_workflow_tasks": extra_tasks,
            "fence.stamp_statements": stamp_statements,
            "fence.stamp_commits": stamp_commits,
            "fence.stamp_round_trips": stamp_trips,
            "fence.write_commits": tally.per_execution(ACT_WRITE_EXECUTE)[1],
            "fence.tool_commits": tally.per_execution(ACT_TOOL_EXECUTE)[1],
            "fence.write_round_trips": tally.per_execution(ACT_WRITE_EXECUTE)[2],
            "fence.tool_round_trips": tally.per_execution(ACT_TOOL_EXECUTE)[2],
        },
    )


def _work(work: list[tuple[int, int]]) -> str:
    """Activities / workflow tasks per step; a range when the steps differ."""
    acts, tasks = sorted({w[0] for w in work}), sorted({w[1] for w in work})
    shown = ["-".join(str(v) for v in sorted({values[0], values[-1]})) for values in (acts, tasks)]
    return " / ".join(shown)
