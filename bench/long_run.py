"""Long runs (issue 30): an agent run of `long_calls` tool calls, each turn with about 1 kB
of model text and a 4 kB tool result, under the bench's raised ceiling, continuing as new
every `long_segment_rounds` rounds. Printed: its history per segment (events and bytes),
and its time and history against the storeless hand-written loop (bench/loop_workflow.py)
given the same sizes, whose transcript travels in its own history (so it grows with the
square of the run's length). Agent and loop runs interleaved, on a worker of their own
(the bench-long toolbox) beside the shared dev server.
"""

import math
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.ids import ACT_MODEL_COMPLETE, ACT_TOOL_EXECUTE
from agentrt.core.settings import Settings
from bench.config import BenchConfig
from bench.drive import BenchError, agent_run, loop_run
from bench.harness import Bench, running_worker
from bench.histories import HistoryFacts, facts, fetch_facts
from bench.long_tools import RESULT_BYTES, toolbox
from bench.loop_workflow import LoopInput
from bench.report import Report, Table, ms, times
from bench.stats import Summary, ratio

PROFILES = Path(__file__).resolve().parent / "long_profiles.yaml"
PROFILE, PROMPT = "bench-long", "bench long"
TEXT_BYTES = 1024
HISTORY_LIMIT = 50 * 1024 * 1024  # Temporal's default history size limit


@dataclass(frozen=True)
class LongSamples:
    agent_ms: list[float]
    loop_ms: list[float]
    segments: list[HistoryFacts]  # the last agent run's, first to last
    loop: HistoryFacts  # the last loop run's history


async def segment_facts(client: Client, workflow_id: str) -> list[HistoryFacts]:
    """Each history segment of a run that continued as new, first to last."""
    out: list[HistoryFacts] = []
    run: str | None = (await client.get_workflow_handle(workflow_id).describe()).run_id
    while run:
        history = await client.get_workflow_handle(workflow_id, run_id=run).fetch_history()
        out.append(facts(history))
        first = history.events[0].workflow_execution_started_event_attributes
        run = first.continued_execution_run_id
    return out[::-1]


async def agent_once(bench: Bench, calls: int) -> tuple[float, str]:
    elapsed, result = await agent_run(bench, PROFILE, PROMPT, max_iterations=calls)
    if result.iterations != calls or result.termination_reason is not (
        TerminationReason.MAX_ITERATIONS
    ):
        raise BenchError(f"a {calls}-call long run made {result.iterations} rounds")
    return elapsed, result.run_id


async def loop_once(bench: Bench, calls: int) -> tuple[float, str]:
    workflow_id = f"bench-long-loop-{uuid.uuid4()}"
    loop = LoopInput(
        run_id=workflow_id[-36:],
        tools=calls,
        stores=False,
        text_bytes=TEXT_BYTES,
        result_bytes=RESULT_BYTES,
    )
    return await loop_run(bench, workflow_id, loop), workflow_id


def _check(segments: list[HistoryFacts], calls: int) -> None:
    models = sum(s.activity_counts()[ACT_MODEL_COMPLETE] for s in segments)
    tools = sum(s.activity_counts()[ACT_TOOL_EXECUTE] for s in segments)
    if (models, tools) != (calls + 1, calls):
        raise BenchError(f"the long run's segments hold {models} model and {tools} tool calls")


async def measure(client: Client, settings: Settings, cfg: BenchConfig) -> Report:
    calls = cfg.long_calls
    print(f"  long runs: {calls} tool calls", file=sys.stderr, flush=True)
    own = settings.replace(
        worker={"profiles_file": PROFILES},
        limits={"segment_rounds": cfg.long_segment_rounds},
        temporal={"task_queue": f"bench-long-{uuid.uuid4().hex[:8]}"},
    )
    agent_ms: list[float] = []
    loop_ms: list[float] = []
    async with running_worker(client, own, toolboxes=[toolbox]) as bench:
        for _ in range(cfg.long_runs):  # interleaved: drift on a shared machine hits both
            elapsed, run_id = await agent_once(bench, calls)
            agent_ms.append(elapsed)
            elapsed, loop_id = await loop_once(bench, calls)
            loop_ms.append(elapsed)
        # Read after the timed runs, so fetching histories delays none of them.
        segments = await segment_facts(bench.client, run_id)
        loop = await fetch_facts(bench.client, loop_id)
    _check(segments, calls)
    return tables(LongSamples(agent_ms, loop_ms, segments, loop), cfg)


def tables(s: LongSamples, cfg: BenchConfig) -> Report:
    calls = cfg.long_calls
    per_segment = Table(
        f"Long run: {calls} tool calls ({RESULT_BYTES} B results, {TEXT_BYTES} B of model "
        f"text a turn), history per segment (AGENTRT_SEGMENT_ROUNDS={cfg.long_segment_rounds})",
        ["segment", "model calls", "tool calls", "events", "history bytes"],
    )
    for n, seg in enumerate(s.segments, start=1):
        counts = seg.activity_counts()
        per_segment.rows.append(
            [str(n), str(counts[ACT_MODEL_COMPLETE]), str(counts[ACT_TOOL_EXECUTE]),
             str(seg.events), str(seg.proto_bytes)]
        )  # fmt: skip
    agent_bytes = sum(seg.proto_bytes for seg in s.segments)
    agent_events = sum(seg.events for seg in s.segments)
    per_segment.rows.append(
        ["all", str(calls + 1), str(calls), str(agent_events), str(agent_bytes)]
    )
    per_segment.notes += [
        "history bytes = sum of the serialized sizes of the segment's events; each segment "
        "ends in continue-as-new but the last, which completes the run.",
        "The transcript stays in the store: the activities get references, so a segment's "
        "history grows with its rounds, not with the run's length or the payload sizes.",
    ]
    agent, loop = Summary.of(s.agent_ms), Summary.of(s.loop_ms)
    versus = Table(
        f"Long run against the storeless hand-written loop, {calls} tool calls "
        f"(median of {cfg.long_runs})",
        ["kind", "run ms", "x loop", "history bytes", "events", "largest history"],
    )
    largest = max(seg.proto_bytes for seg in s.segments)
    versus.rows += [
        ["agent", ms(agent.p50), times(ratio(agent.p50, loop.p50)), str(agent_bytes),
         str(agent_events), str(largest)],
        ["loop", ms(loop.p50), "1.00x", str(s.loop.proto_bytes), str(s.loop.events),
         str(s.loop.proto_bytes)],
    ]  # fmt: skip
    # The loop's history grows with the square of its calls (each model input carries the
    # transcript so far): the limit, extrapolated from its measured size.
    at_limit = calls * math.sqrt(HISTORY_LIMIT / s.loop.proto_bytes)
    versus.notes += [
        "loop: model activity, then one activity per tool call, the transcript in the model "
        "activity's input (bench/loop_workflow.py, stores=False), the same payload sizes; its "
        "last call is a write (a ledger row), the agent's are all reads.",
        f"the loop's one history would reach Temporal's 50 MB limit at about {at_limit:.0f} "
        "tool calls (extrapolated as the square of the calls); the agent's largest segment "
        "stays bounded by AGENTRT_SEGMENT_ROUNDS however long the run.",
    ]
    report = Report([per_segment, versus])
    report.figures.update(
        {
            "long.agent_ms": agent.p50,
            "long.loop_ms": loop.p50,
            "long.ratio": ratio(agent.p50, loop.p50),
            "long.segments": float(len(s.segments)),
            "long.largest_segment_bytes": float(largest),
            "long.agent_bytes": float(agent_bytes),
            "long.loop_bytes": float(s.loop.proto_bytes),
            "long.loop_calls_at_limit": at_limit,
        }
    )
    return report
