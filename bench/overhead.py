"""Agent-run overhead: an agent run with k tool calls against a bare workflow running the
same number of activities, on the same dev server, worker and task queue."""

import sys
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentrt.contracts.ids import ACT_TOOL_EXECUTE
from bench.bare_workflow import ACT_DB_WRITE, ACT_NOOP
from bench.breakdown import Breakdown
from bench.config import BenchConfig
from bench.drive import BenchError, answered_run, bare_run, throughput
from bench.harness import Bench
from bench.histories import fetch_facts
from bench.report import Report, Table, ms, times, verdict
from bench.sqlcount import counting
from bench.stats import Summary, ratio

PROFILE = "bench-read"
TARGET = 1.15
THROUGHPUT_SLICES = 3


def prompt(k: int) -> str:
    return f"bench tools={k}"


@dataclass(frozen=True)
class OverheadRow:
    k: int
    counts: Counter[str]
    agent: Summary
    bare: Summary
    bare_db: Summary
    agent_rps: float
    bare_rps: float
    bare_db_rps: float

    @property
    def activities(self) -> int:
        return sum(self.counts.values())


async def _agent(bench: Bench, k: int) -> tuple[float, str]:
    return await answered_run(bench, PROFILE, prompt(k), k)


async def _throughputs(bench: Bench, k: int, n: int, cfg: BenchConfig) -> tuple[float, ...]:
    """Runs/s per kind, measured in alternating slices so drift hits every kind alike."""
    kinds: list[Callable[[], Awaitable[object]]] = [
        lambda: _agent(bench, k),
        lambda: bare_run(bench, n, ACT_NOOP),
        lambda: bare_run(bench, n, ACT_DB_WRITE),
    ]
    slices = max(1, min(THROUGHPUT_SLICES, cfg.throughput_runs))
    per_slice = max(1, cfg.throughput_runs // slices)
    seconds = [0.0] * len(kinds)
    for _ in range(slices):
        for i, one in enumerate(kinds):
            rate = await throughput(one, total=per_slice, concurrency=cfg.concurrency)
            seconds[i] += per_slice / rate
    return tuple(slices * per_slice / s for s in seconds)


async def measure_k(bench: Bench, k: int, cfg: BenchConfig, parts: Breakdown) -> OverheadRow:
    run_id = ""
    for _ in range(cfg.warmup):
        _, run_id = await _agent(bench, k)
    # The baseline runs exactly as many activities as an agent run did, read from its history.
    counts = (await fetch_facts(bench.client, run_id)).activity_counts()
    if counts[ACT_TOOL_EXECUTE] != k:
        raise BenchError(f"agent run for k={k} made {counts[ACT_TOOL_EXECUTE]} tool calls")
    n = sum(counts.values())
    for _ in range(cfg.warmup):
        await bare_run(bench, n, ACT_NOOP)
        await bare_run(bench, n, ACT_DB_WRITE)
    agent: list[float] = []
    bare: list[float] = []
    bare_db: list[float] = []
    # Interleaved, so that drift on a shared machine hits all three kinds alike.
    for _ in range(cfg.runs):
        elapsed, run_id = await _agent(bench, k)
        agent.append(elapsed)
        bare_id, db_id = f"bench-bare-{uuid.uuid4()}", f"bench-bare-{uuid.uuid4()}"
        bare.append(await bare_run(bench, n, ACT_NOOP, workflow_id=bare_id))
        bare_db.append(await bare_run(bench, n, ACT_DB_WRITE, workflow_id=db_id))
        for kind, wid in (("agent", run_id), ("bare", bare_id), ("bare+db", db_id)):
            parts.add(kind, await fetch_facts(bench.client, wid))
    agent_rps, bare_rps, bare_db_rps = await _throughputs(bench, k, n, cfg)
    return OverheadRow(
        k=k,
        counts=counts,
        agent=Summary.of(agent),
        bare=Summary.of(bare),
        bare_db=Summary.of(bare_db),
        agent_rps=agent_rps,
        bare_rps=bare_rps,
        bare_db_rps=bare_db_rps,
    )


async def measure(bench: Bench, cfg: BenchConfig) -> Report:
    parts = Breakdown()
    rows: list[OverheadRow] = []
    with counting(bench.parts.engine) as tally:
        for k in cfg.tools:
            print(f"  overhead: k={k}", file=sys.stderr, flush=True)
            rows.append(await measure_k(bench, k, cfg, parts))
    report = tables(rows, cfg)
    table = parts.table("Agent-run overhead: where the time goes (server clock, ms)", tally)
    extra_in = parts.mean("agent", activities=True) - parts.mean("bare", activities=True)
    extra_between = parts.mean("agent", activities=False) - parts.mean("bare", activities=False)
    report.figures["overhead.activity_extra_ms"] = extra_in
    report.figures["overhead.between_extra_ms"] = extra_between
    table.notes += [
        f"Per activity, an agent run spends {extra_in:.1f} ms more inside its activities "
        f"and {extra_between:.1f} ms more in the workflow task between two activities than "
        f"the bare workflow (all k pooled, timed runs only).",
        "SQL per execution: statements (with SQLite's BEGIN IMMEDIATE), commits and round "
        "trips, as bench/sqlcount.py counts them.",
    ]
    report.tables.append(table)
    return report


def _shape(counts: Counter[str]) -> str:
    return " + ".join(f"{n} {name}" for name, n in counts.items())


def tables(rows: list[OverheadRow], cfg: BenchConfig) -> Report:
    latency = Table(
        f"Agent-run overhead: sequential runs (ms per run, n={cfg.runs} each)",
        [
            "k",
            "acts",
            "agent mean",
            "p50",
            "p95",
            "bare mean",
            "p50",
            "p95",
            "agent/bare",
            "target",
            "bare+db mean",
            "agent/bare+db",
        ],
    )
    tput = Table(
        f"Agent-run overhead: throughput ({cfg.concurrency} in flight, {cfg.throughput_runs} "
        f"runs per kind in {THROUGHPUT_SLICES} alternating slices)",
        ["k", "agent runs/s", "bare runs/s", "bare/agent", "bare+db runs/s", "bare+db/agent"],
    )
    report = Report([latency, tput])
    for r in rows:
        over = ratio(r.agent.mean, r.bare.mean)
        over_db = ratio(r.agent.mean, r.bare_db.mean)
        latency.rows.append(
            [
                str(r.k),
                str(r.activities),
                ms(r.agent.mean),
                ms(r.agent.p50),
                ms(r.agent.p95),
                ms(r.bare.mean),
                ms(r.bare.p50),
                ms(r.bare.p95),
                times(over),
                verdict(over <= TARGET),
                ms(r.bare_db.mean),
                times(over_db),
            ]
        )
        tput.rows.append(
            [
                str(r.k),
                f"{r.agent_rps:.1f}",
                f"{r.bare_rps:.1f}",
                times(ratio(r.bare_rps, r.agent_rps)),
                f"{r.bare_db_rps:.1f}",
                times(ratio(r.bare_db_rps, r.agent_rps)),
            ]
        )
        report.figures[f"overhead.k{r.k}.ratio"] = over
        report.figures[f"overhead.k{r.k}.ratio_db"] = over_db
        report.figures[f"overhead.k{r.k}.agent_ms"] = r.agent.mean
        report.figures[f"overhead.k{r.k}.bare_ms"] = r.bare.mean
        report.figures[f"overhead.k{r.k}.agent_rps"] = r.agent_rps
        report.figures[f"overhead.k{r.k}.bare_rps"] = r.bare_rps
    if rows:
        latency.notes.append(
            f"An agent run with k tool calls makes k rounds of one tool call, then answers: "
            f"for k={rows[0].k} its history holds {_shape(rows[0].counts)}. The bare "
            f"workflow runs the same number of activities (acts) back to back."
        )
    latency.notes += [
        f"bare: each activity does nothing; bare+db: each activity commits one trivial "
        f"write to the same database. agent/bare is the overhead ratio (target <= {TARGET}).",
        "Latency is client-side: start the workflow, wait for its result. Agent runs start "
        "through starter.facade.AgentRuntime.start; every run is checked afterwards.",
    ]
    return report
