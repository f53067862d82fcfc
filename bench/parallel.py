"""Parallel tool calls (issue 30): one turn of three independent reads, each a fixed 50 ms
(bench/slow_tools.py), against the same turn with one read, the same turn run one call at a
time (`max_parallel_tools: 1`, the loop before), and the hand-written loop, which runs the
three reads one by one (bench/loop_workflow.py, `turn_calls`).

Its own worker on its own queue (the profiles of bench/parallel_profiles.yaml and the
bench-slow toolbox), beside the shared one. Idle: one run at a time, the four kinds
interleaved run by run. From each history:
- the turn's tools: from the first tool activity scheduled to the last one completed;
- the turn: from the model activity that asked for the calls completing to the next model
  activity scheduled (the tools plus the workflow tasks around them).
The whole run is timed at the client, start to result."""

import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from temporalio.client import Client

from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.ids import ACT_MODEL_COMPLETE, ACT_TOOL_EXECUTE
from agentrt.core.settings import Settings
from bench.config import BenchConfig
from bench.drive import BenchError, agent_run, loop_run
from bench.harness import HERE, Bench, running_worker
from bench.histories import HistoryFacts, fetch_facts
from bench.loop_workflow import ACT_LOOP_MODEL, ACT_LOOP_TOOL, LoopInput
from bench.report import Report, Table, ms, times, verdict
from bench.slow_tools import TOOL_MS, toolbox
from bench.stats import Summary

PROFILES = HERE / "parallel_profiles.yaml"
CALLS = 3
TARGET = 1.3  # the turn's tools, three at once, against one call


@dataclass(frozen=True)
class Kind:
    label: str
    run: Callable[[Bench], Awaitable[tuple[float, str]]]  # (client ms, workflow id)
    model: str  # its model activity's type, and its tool activity's
    tool: str
    calls: int


def _agent(profile: str, calls: int) -> Callable[[Bench], Awaitable[tuple[float, str]]]:
    async def once(bench: Bench) -> tuple[float, str]:
        elapsed, result = await agent_run(bench, profile, f"bench parallel={calls}")
        if result.iterations != 2 or result.termination_reason is not TerminationReason.ANSWERED:
            raise BenchError(f"{profile} run took {result.iterations} rounds, not 2")
        return elapsed, result.run_id

    return once


async def _loop(bench: Bench) -> tuple[float, str]:
    workflow_id = f"bench-loop-turn-{uuid.uuid4()}"
    loop = LoopInput(run_id=str(uuid.uuid4()), tools=CALLS, turn_calls=CALLS, tool_ms=TOOL_MS)
    return await loop_run(bench, workflow_id, loop), workflow_id


def _agent_kind(label: str, profile: str, calls: int) -> Kind:
    return Kind(label, _agent(profile, calls), ACT_MODEL_COMPLETE, ACT_TOOL_EXECUTE, calls)


KINDS = (
    _agent_kind("agent, 1 call", "bench-parallel", 1),
    _agent_kind(f"agent, {CALLS} calls at once", "bench-parallel", CALLS),
    _agent_kind(f"agent, {CALLS} calls one by one", "bench-parallel-seq", CALLS),
    Kind(f"hand-written loop, {CALLS} one by one", _loop, ACT_LOOP_MODEL, ACT_LOOP_TOOL, CALLS),
)
ONE, GROUP, ONE_BY_ONE, LOOP = (k.label for k in KINDS)


def turn_times(facts: HistoryFacts, kind: Kind) -> tuple[float, float]:
    """(the turn's tools, the whole turn) in ms, from the history."""
    tools = [s for s in facts.spans if s.activity_type == kind.tool]
    models = [s for s in facts.spans if s.activity_type == kind.model]
    if len(tools) != kind.calls or len(models) != 2:
        raise BenchError(f"{kind.label}: {len(tools)} tool and {len(models)} model activities")
    first, last = min(s.scheduled_ns for s in tools), max(s.completed_ns for s in tools)
    return (last - first) / 1e6, (models[1].scheduled_ns - models[0].completed_ns) / 1e6


@dataclass
class Samples:
    run: list[float]
    tools: list[float]
    turn: list[float]


async def _measure_on(bench: Bench, cfg: BenchConfig) -> dict[str, Samples]:
    for _ in range(cfg.warmup):
        for kind in KINDS:
            await kind.run(bench)
    ids: dict[str, list[str]] = {k.label: [] for k in KINDS}
    samples = {k.label: Samples([], [], []) for k in KINDS}
    for _ in range(cfg.runs):  # interleaved, so drift on a shared machine hits all alike
        for kind in KINDS:
            elapsed, workflow_id = await kind.run(bench)
            samples[kind.label].run.append(elapsed)
            ids[kind.label].append(workflow_id)
    # Read after the timed runs, so fetching histories delays none of them.
    for kind in KINDS:
        for workflow_id in ids[kind.label]:
            tools, turn = turn_times(await fetch_facts(bench.client, workflow_id), kind)
            samples[kind.label].tools.append(tools)
            samples[kind.label].turn.append(turn)
    return samples


async def measure(client: Client, settings: Settings, cfg: BenchConfig) -> Report:
    print("  parallel tool calls", file=sys.stderr, flush=True)
    own = settings.replace(
        worker={"profiles_file": PROFILES},
        temporal={"task_queue": f"bench-parallel-{uuid.uuid4().hex[:8]}"},
    )
    async with running_worker(client, own, toolboxes=[toolbox]) as bench:
        samples = await _measure_on(bench, cfg)
    return tables(samples, cfg)


def tables(samples: dict[str, Samples], cfg: BenchConfig) -> Report:
    med = {label: {part: Summary.of(getattr(s, part)).p50 for part in ("run", "tools", "turn")}
           for label, s in samples.items()}  # fmt: skip
    one = med[ONE]
    table = Table(
        f"Parallel tool calls: one turn of {CALLS} reads of {TOOL_MS} ms each "
        f"(median of {cfg.runs} runs)",
        ["kind", "turn's tools ms", "x one call", "turn ms", "x one call", "run ms"],
    )
    for label, m in med.items():
        tools, turn = m["tools"], m["turn"]
        row = [ms(tools), times(tools / one["tools"]), ms(turn), times(turn / one["turn"])]
        table.rows.append([label, *row, ms(m["run"])])
    ratio = med[GROUP]["tools"] / one["tools"]
    table.notes += [
        "turn's tools: first tool activity scheduled to last completed; turn: the model "
        "activity that asked for them completed to the next one scheduled (history times)",
        f"target: the turn's tools at once under {TARGET}x one call: {times(ratio)} "
        f"{verdict(ratio < TARGET)}",
        f"whole run, agent ({CALLS} at once) / hand-written loop (one by one): "
        f"{times(med[GROUP]['run'] / med[LOOP]['run'])}; agent one by one / loop: "
        f"{times(med[ONE_BY_ONE]['run'] / med[LOOP]['run'])}",
    ]
    figures = {
        "parallel.tools_ratio": ratio,
        "parallel.one_by_one_tools_ratio": med[ONE_BY_ONE]["tools"] / one["tools"],
        "parallel.turn_ratio": med[GROUP]["turn"] / one["turn"],
        "parallel.run_ratio": med[GROUP]["run"] / med[LOOP]["run"],
        "parallel.one_by_one_run_ratio": med[ONE_BY_ONE]["run"] / med[LOOP]["run"],
    }
    return Report([table], figures)
