"""Counting database round trips per activity type, from SQLAlchemy engine events.

Store calls run on the worker's store pool (workers/pool.py) or the activity
executor, each in a copy of the activity's context, so the Temporal activity (a local one
too: run.begin, fence.stamp) that issued each statement is known.

- statements: what the cursor executed (a transaction's BEGIN or BEGIN IMMEDIATE included);
- commits: durable writes, a transaction's COMMIT or a writing statement in autocommit;
- the tools' own I/O is left out (a demo tool's read or write, the same in the
  hand-written loop): what is counted is the runtime's own work;
- round trips: on PostgreSQL the statements (a transaction's BEGIN, sent by the store's
  engine, included), plus the COMMIT or ROLLBACK that ends a transaction (none in
  autocommit). SQLite sends nothing over a network: there a transaction (BEGIN ...
  COMMIT or ROLLBACK, run in one call sequence under its lock) counts as one, and so does
  a statement in autocommit;
- transactions: BEGIN ... COMMIT or ROLLBACK blocks, plus every statement run in
  autocommit (each is its own).

Each execution's own counts are kept too (`shapes`): an activity type whose executions
differ (the model call that completes the run against the others) shows each shape.
`python -m bench.sqlcount [--postgres] [--tools K] [--runs N]` runs N agent runs of k
tool calls one at a time and prints every activity's shapes and the counts per run.
"""

import asyncio
import contextvars
import statistics
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, event
from temporalio import activity

from agentrt.store.db.engine import in_autocommit
from agentrt.workers.tracing import TracedTool

# Set while a tool itself runs (its statements are not the runtime's).
_IN_TOOL: contextvars.ContextVar[bool] = contextvars.ContextVar("bench_in_tool", default=False)


@dataclass
class SqlTally:
    statements: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    commits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    round_trips: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    transactions: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    executions: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    # Per execution (activity type, workflow id, activity id, attempt): statements,
    # transactions, commits, round trips.
    each: dict[tuple[str, str, str, int], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0])
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _note(self, *names: str) -> None:
        """Count one of each named counter for the activity running now (none outside one,
        or inside a tool's own call)."""
        if not activity.in_activity() or _IN_TOOL.get():
            return
        info = activity.info()
        kind = info.activity_type
        with self._lock:
            own = self.each[(kind, info.workflow_id or "", info.activity_id, info.attempt)]
            for name in names:
                getattr(self, name)[kind] += 1
                own[_SLOTS.index(name)] += 1
            self.executions[kind].add((info.workflow_id or "", info.activity_id))

    def shapes(self) -> dict[str, dict[tuple[int, int, int, int], int]]:
        """Activity type -> (statements, transactions, commits, round trips) of one
        execution -> how many executions had it."""
        out: dict[str, dict[tuple[int, int, int, int], int]] = defaultdict(lambda: defaultdict(int))
        for (kind, *_), counts in list(self.each.items()):
            out[kind][(counts[0], counts[1], counts[2], counts[3])] += 1
        return out

    def per_workflow(self) -> dict[str, list[int]]:
        """Workflow id -> its activities' (statements, transactions, commits, round trips)."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for (_, workflow_id, _, _), counts in list(self.each.items()):
            out[workflow_id] = [a + b for a, b in zip(out[workflow_id], counts, strict=True)]
        return out

    def per_run(self, workflow_ids: Sequence[str]) -> tuple[float, float]:
        """(statements, commits) of a run: the medians over these workflows' runs (0, 0 for
        none: a run whose activities ran no statement of the runtime's own is not in the
        tally, and counts as 0)."""
        runs = self.per_workflow()
        counts = [runs.get(i, [0, 0, 0, 0]) for i in workflow_ids]
        if not counts:
            return 0.0, 0.0
        return (
            statistics.median(c[0] for c in counts),
            statistics.median(c[2] for c in counts),
        )

    def per_execution(self, activity_type: str) -> tuple[float, float, float]:
        """(statements, commits, round trips) per execution of one activity type."""
        n = len(self.executions.get(activity_type, ()))
        if not n:
            return 0.0, 0.0, 0.0
        return (
            self.statements[activity_type] / n,
            self.commits[activity_type] / n,
            self.round_trips[activity_type] / n,
        )

    def shown(self, activity_type: str) -> str:
        statements, commits, trips = self.per_execution(activity_type)
        return f"{statements:.1f} / {commits:.1f} / {trips:.1f}"


COLUMN = "SQL stmts / commits / round trips"
_SLOTS = ("statements", "transactions", "commits", "round_trips")
_WRITES = ("INSERT", "UPDATE", "DELETE", "WITH")


def _autocommit(conn: Any) -> bool:
    return in_autocommit(conn)


@contextmanager
def counting(engine: Engine) -> Iterator[SqlTally]:
    tally = SqlTally()
    postgres = engine.dialect.name == "postgresql"

    def on_statement(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        names = ["statements"]
        autocommit = _autocommit(conn)
        if postgres or autocommit:  # SQLite: a statement outside a transaction is one
            names.append("round_trips")
        if autocommit:
            names.append("transactions")
            if statement.lstrip()[:6].upper().startswith(_WRITES):
                names.append("commits")
        tally._note(*names)

    def on_begin(conn: Any) -> None:
        # The BEGIN itself is a statement both engines send (store/db/engine.py), counted
        # (and on PostgreSQL its round trip) by on_statement.
        if not _autocommit(conn):
            tally._note("transactions")

    def on_commit(conn: Any) -> None:
        if not _autocommit(conn):
            tally._note("commits", "round_trips")

    def on_rollback(conn: Any) -> None:
        if not _autocommit(conn):
            tally._note("round_trips")

    listeners = {"before_cursor_execute": on_statement, "begin": on_begin,
                 "commit": on_commit, "rollback": on_rollback}  # fmt: skip
    for name, fn in listeners.items():
        event.listen(engine, name, fn)
    # Every registered tool is wrapped in a TracedTool (workers/compose.py): mark its calls.
    tool_call = TracedTool.__call__

    async def marked(self: TracedTool, arguments: dict[str, Any], ctx: Any) -> str:
        token = _IN_TOOL.set(True)
        try:
            return await tool_call(self, arguments, ctx)
        finally:
            _IN_TOOL.reset(token)

    TracedTool.__call__ = marked  # type: ignore[method-assign]
    try:
        yield tally
    finally:
        TracedTool.__call__ = tool_call  # type: ignore[method-assign]
        for name, fn in listeners.items():
            event.remove(engine, name, fn)


# --- python -m bench.sqlcount ---------------------------------------------------------------

_SHOWN = "statements / transactions / commits / round trips"


def _row(counts: Sequence[float]) -> str:
    return " / ".join(f"{c:g}" for c in counts)


def report(tally: SqlTally, agent_ids: Sequence[str]) -> str:
    """Every activity's shapes, and the median counts of an agent run."""
    lines = [f"per execution ({_SHOWN}): how many executions"]
    for kind, shapes in sorted(tally.shapes().items()):
        for shape, n in sorted(shapes.items()):
            lines.append(f"  {kind:28s} {_row(shape):>18s}   x{n}")
    runs = tally.per_workflow()
    agent = [runs[i] for i in agent_ids if i in runs]
    if agent:
        median = [statistics.median(c[i] for c in agent) for i in range(4)]
        lines.append(f"agent run, median of {len(agent)} ({_SHOWN}): {_row(median)}")
    return "\n".join(lines)


async def _main(postgres: bool, k: int, runs: int) -> None:
    from bench.database import describe
    from bench.drive import agent_once, loop_once
    from bench.harness import scratch_worker

    async with scratch_worker("agentrt-sql-", postgres=postgres) as (b, url):
        await agent_once(b, k)  # warm: the first run builds statements and connections
        await loop_once(b, k, stores=False)
        ids: list[str] = []
        with counting(b.parts.engine) as tally:
            for _ in range(runs):
                ids.append((await agent_once(b, k))[1])
                await loop_once(b, k, stores=False)
        print(f"{describe(url)}, k={k}, {runs} agent and {runs} storeless runs")
        print(report(tally, ids))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.sqlcount")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--tools", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    asyncio.run(_main(ns.postgres, ns.tools, ns.runs))
