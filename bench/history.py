"""History growth: event-history bytes per model call for runs of growing length.

The loop passes references (run id, round, sequence) to its activities, never the
transcript, so every round should add about the same number of bytes: linear growth.
"""

from dataclasses import dataclass

from agentrt.contracts.ids import ACT_MODEL_COMPLETE
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING
from bench.drive import BenchError, agent_run
from bench.harness import Bench
from bench.histories import HistoryFacts, fetch_facts
from bench.report import Report, Table, times
from bench.stats import ratio

PROFILE = "bench-read"
PROMPT = "bench loop"  # a tool call every round until the cap, then a tool-less answer


@dataclass(frozen=True)
class HistoryRow:
    rounds: int
    model_calls: int
    facts: HistoryFacts
    raised_ceiling: bool

    @property
    def per_call(self) -> float:
        return self.facts.proto_bytes / self.model_calls


async def measure_one(bench: Bench, rounds: int) -> HistoryRow:
    _, result = await agent_run(bench, PROFILE, PROMPT, max_iterations=rounds)
    facts = await fetch_facts(bench.client, result.run_id)
    calls = facts.activity_counts()[ACT_MODEL_COMPLETE]
    if calls != rounds + 1:
        raise BenchError(f"a {rounds}-round run made {calls} model calls, not {rounds + 1}")
    return HistoryRow(rounds, calls, facts, rounds > MAX_ITERATIONS_CEILING)


async def measure(bench: Bench, rounds: tuple[int, ...], long_rounds: int) -> list[HistoryRow]:
    rows = [await measure_one(bench, r) for r in rounds]
    if long_rounds:
        rows.append(await measure_one(bench, long_rounds))
    return rows


def tables(rows: list[HistoryRow]) -> Report:
    table = Table(
        "History growth (one agent run per length)",
        [
            "rounds",
            "model calls",
            "activities",
            "events",
            "history bytes",
            "bytes/model call",
            "marginal bytes/model call",
            "history.to_json() chars",
        ],
    )
    report = Report([table])
    previous: HistoryRow | None = None
    marginals: list[float] = []
    for r in rows:
        marginal = "-"
        if previous is not None:
            step = (r.facts.proto_bytes - previous.facts.proto_bytes) / (
                r.model_calls - previous.model_calls
            )
            marginals.append(step)
            marginal = f"{step:.0f}"
        label = f"{r.rounds} (raised cap)" if r.raised_ceiling else str(r.rounds)
        table.rows.append(
            [
                label,
                str(r.model_calls),
                str(sum(r.facts.activity_counts().values())),
                str(r.facts.events),
                str(r.facts.proto_bytes),
                f"{r.per_call:.0f}",
                marginal,
                str(r.facts.json_chars),
            ]
        )
        previous = r
    if rows:
        first, last = rows[0], rows[-1]
        flat = ratio(last.per_call, first.per_call)
        report.figures["history.bytes_per_model_call.first"] = first.per_call
        report.figures["history.bytes_per_model_call.last"] = last.per_call
        report.figures["history.bytes_per_model_call.last_over_first"] = flat
        table.notes.append(
            f"bytes/model call, last/first: {times(flat)} ({last.model_calls} vs "
            f"{first.model_calls} model calls); <= 1 means no growth beyond linear (the fixed "
            f"start/begin/complete events are spread over more calls)."
        )
    if len(marginals) >= 2:
        spread = ratio(max(marginals), min(marginals))
        report.figures["history.marginal_spread"] = spread
        table.notes.append(
            f"marginal bytes per extra model call (each with its tool call) stay within "
            f"{times(spread)} of each other across lengths: linear growth."
        )
    table.notes += [
        "A round is one model call and one tool call (lookup_order); the run ends with one "
        "tool-less model call at the cap, so model calls = rounds + 1.",
        "history bytes = sum of the serialized sizes of the history events.",
    ]
    if any(r.raised_ceiling for r in rows):
        table.notes.append(
            "raised cap: past the default ceiling of 20 rounds, under the bench's raised "
            "AGENTRT_MAX_ITERATIONS_CEILING; one history segment (fewer rounds than "
            "AGENTRT_SEGMENT_ROUNDS; segments: the long-run section)."
        )
    else:
        table.notes.append("Run lengths are capped at 20 rounds (21 model calls) by the ceiling.")
    return report
