"""Where a run's time goes, from its history (server clock): each activity from scheduling to
completion, the workflow task between two activities, and the run's two ends."""

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from bench.histories import HistoryFacts
from bench.report import Table, ms
from bench.sqlcount import SqlTally
from bench.stats import Summary

BETWEEN = "between activities (workflow task)"
OPENING = "start -> first activity"
CLOSING = "last activity -> closed"
ENDS = (BETWEEN, OPENING, CLOSING)


@dataclass
class Breakdown:
    # (kind of run, piece) -> samples in ms; insertion order is the table's order.
    samples: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, kind: str, facts: HistoryFacts) -> None:
        spans = facts.spans
        for span in spans:
            self.samples[(kind, span.activity_type)].append(span.ms)
        for a, b in itertools.pairwise(spans):
            self.samples[(kind, BETWEEN)].append((b.scheduled_ns - a.completed_ns) / 1e6)
        if spans:
            self.samples[(kind, OPENING)].append((spans[0].scheduled_ns - facts.opened_ns) / 1e6)
            self.samples[(kind, CLOSING)].append((facts.closed_ns - spans[-1].completed_ns) / 1e6)

    def mean(self, kind: str, *, activities: bool) -> float:
        """Mean over all activities of a kind of run (or over its gaps between them)."""
        values = [
            v
            for (k, piece), got in self.samples.items()
            if k == kind and (piece not in ENDS if activities else piece == BETWEEN)
            for v in got
        ]
        return sum(values) / len(values) if values else float("nan")

    def table(self, title: str, tally: SqlTally) -> Table:
        table = Table(title, ["run", "piece", "n", "mean", "p50", "p95", "SQL stmts / commits"])
        for (kind, piece), values in self.samples.items():
            s = Summary.of(values)
            sql = "-"
            if piece not in ENDS:
                statements, commits = tally.per_execution(piece)
                sql = f"{statements:.1f} / {commits:.1f}"
            table.rows.append([kind, piece, str(s.n), ms(s.mean), ms(s.p50), ms(s.p95), sql])
        return table
