"""Where a run's time goes, from its history (server clock): each activity from scheduling to
completion, the workflow task between two activities, and the run's two ends."""

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from bench.histories import HistoryFacts
from bench.report import Table, ms
from bench.sqlcount import COLUMN, SqlTally
from bench.stats import Summary

BETWEEN = "between activities (workflow task)"
OPENING = "start -> first activity"
CLOSING = "last activity -> closed"
ENDS = (BETWEEN, OPENING, CLOSING)


@dataclass
class Breakdown:
    # (kind of run, piece) -> samples in ms; insertion order is the table's order.
    samples: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    # The same activities' wait for a worker (scheduled to started): dispatch, not work.
    queued: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, kind: str, facts: HistoryFacts) -> None:
        spans = facts.spans
        for span in spans:
            self.samples[(kind, span.activity_type)].append(span.ms)
            self.queued[(kind, span.activity_type)].append(span.queued_ms)
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
        table = Table(title, ["run", "piece", "n", "mean", "p50", "p95", "queued p50", COLUMN])
        for (kind, piece), values in self.samples.items():
            s = Summary.of(values)
            sql = queued = "-"
            if piece not in ENDS:
                sql = tally.shown(piece)
                queued = ms(Summary.of(self.queued[(kind, piece)]).p50)
            table.rows.append(
                [kind, piece, str(s.n), ms(s.mean), ms(s.p50), ms(s.p95), queued, sql]
            )
        return table


@dataclass
class RunSplit:
    """Where one kind of run spends its time, as totals per run (server clock, ms): from the
    start to the first activity, inside activities (scheduled to completed), the workflow
    tasks between two activities, and from the last activity to the close."""

    opening: list[float] = field(default_factory=list)
    inside: list[float] = field(default_factory=list)
    between: list[float] = field(default_factory=list)
    closing: list[float] = field(default_factory=list)
    activities: list[int] = field(default_factory=list)

    def add(self, facts: HistoryFacts) -> None:
        spans = facts.spans
        if not spans:
            return
        self.opening.append((spans[0].scheduled_ns - facts.opened_ns) / 1e6)
        self.inside.append(sum(s.ms for s in spans))
        self.between.append(
            sum((b.scheduled_ns - a.completed_ns) / 1e6 for a, b in itertools.pairwise(spans))
        )
        self.closing.append((facts.closed_ns - spans[-1].completed_ns) / 1e6)
        self.activities.append(len(spans))

    def row(self, label: str) -> list[str]:
        def median(values: list[float]) -> str:
            return ms(Summary.of(values).p50) if values else "-"

        total = [
            sum(t) for t in zip(self.opening, self.inside, self.between, self.closing, strict=True)
        ]
        acts = f"{sum(self.activities) / len(self.activities):.0f}" if self.activities else "-"
        return [label, acts, median(self.opening), median(self.inside), median(self.between),
                median(self.closing), median(total)]  # fmt: skip


SPLIT_COLUMNS = ["run", "activities", "start -> 1st", "in activities", "between (workflow tasks)",
                 "last -> closed", "total"]  # fmt: skip
