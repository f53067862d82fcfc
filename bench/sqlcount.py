"""Counting database round trips per activity type, from SQLAlchemy engine events.

Store calls run in threads started by asyncio.to_thread, which copies the activity's
context, so the Temporal activity that issued each statement is known.

- statements: what the cursor executed (SQLite's explicit BEGIN IMMEDIATE included);
- commits: durable writes, a transaction's COMMIT or a writing statement in autocommit;
- the tools' own I/O is left out (a demo tool's read or write, the same in the
  hand-written loop): what is counted is the runtime's own work;
- round trips: on PostgreSQL the statements, plus the BEGIN psycopg sends before a
  transaction's first statement and the COMMIT or ROLLBACK that ends it (none in
  autocommit). SQLite sends nothing over a network: there a transaction (BEGIN ...
  COMMIT or ROLLBACK, run in one call sequence under its lock) counts as one.
"""

import contextvars
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, event
from temporalio import activity

from agentrt.workers.tracing import TracedTool

# Set while a tool itself runs (its statements are not the runtime's).
_IN_TOOL: contextvars.ContextVar[bool] = contextvars.ContextVar("bench_in_tool", default=False)


@dataclass
class SqlTally:
    statements: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    commits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    round_trips: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    executions: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _note(self, *counters: dict[str, int]) -> None:
        if not activity.in_activity() or _IN_TOOL.get():
            return
        info = activity.info()
        with self._lock:
            for counter in counters:
                counter[info.activity_type] += 1
            self.executions[info.activity_type].add((info.workflow_id or "", info.activity_id))

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
_WRITES = ("INSERT", "UPDATE", "DELETE", "WITH")


def _autocommit(conn: Any) -> bool:
    return bool(conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT")


@contextmanager
def counting(engine: Engine) -> Iterator[SqlTally]:
    tally = SqlTally()
    postgres = engine.dialect.name == "postgresql"

    def on_statement(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        counters = [tally.statements]
        if postgres:
            counters.append(tally.round_trips)
        if _autocommit(conn) and statement.lstrip()[:6].upper().startswith(_WRITES):
            counters.append(tally.commits)
        tally._note(*counters)

    def on_begin(conn: Any) -> None:
        if postgres and not _autocommit(conn):
            tally._note(tally.round_trips)

    def on_commit(conn: Any) -> None:
        if not _autocommit(conn):
            tally._note(tally.commits, tally.round_trips)

    def on_rollback(conn: Any) -> None:
        if not _autocommit(conn):
            tally._note(tally.round_trips)

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
