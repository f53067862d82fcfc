"""Counting database round trips per activity type, from SQLAlchemy engine events.

Store calls run in threads started by asyncio.to_thread, which copies the activity's
context, so the Temporal activity that issued each statement is known.
"""

import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, event
from temporalio import activity


@dataclass
class SqlTally:
    statements: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    commits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    executions: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _note(self, counter: dict[str, int]) -> None:
        if not activity.in_activity():
            return
        info = activity.info()
        with self._lock:
            counter[info.activity_type] += 1
            self.executions[info.activity_type].add((info.workflow_id or "", info.activity_id))

    def per_execution(self, activity_type: str) -> tuple[float, float]:
        """(statements, commits) per execution of one activity type."""
        n = len(self.executions.get(activity_type, ()))
        if not n:
            return 0.0, 0.0
        return self.statements[activity_type] / n, self.commits[activity_type] / n


@contextmanager
def counting(engine: Engine) -> Iterator[SqlTally]:
    tally = SqlTally()

    def on_statement(*_args: Any) -> None:
        tally._note(tally.statements)

    def on_commit(*_args: Any) -> None:
        tally._note(tally.commits)

    event.listen(engine, "before_cursor_execute", on_statement)
    event.listen(engine, "commit", on_commit)
    try:
        yield tally
    finally:
        event.remove(engine, "before_cursor_execute", on_statement)
        event.remove(engine, "commit", on_commit)
