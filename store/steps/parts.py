"""What a step writes: its rows as parts (an insert of one of INSERTS' kinds, or a guarded
update), the vocabulary the step writers (write.py, sqlite_view.py) and their callers share."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table
from sqlalchemy.sql.dml import Update

from agentrt.store.db.tables import EventRow, MessageRow, RunRow, ToolResultRow

# An update part's statement, built from the prefix its bind names carry (`{prefix}run_id`).
UpdateBuilder = Callable[[str], Update]


@dataclass(frozen=True)
class _Kind:
    table: Table
    key: tuple[str, ...]  # the unique key an insert ignores duplicates on


# The insert parts. A part's params are its row's columns.
INSERTS: dict[str, _Kind] = {
    "run": _Kind(RunRow.__table__, ("id",)),  # type: ignore[arg-type]
    "message": _Kind(MessageRow.__table__, ("run_id", "sequence")),  # type: ignore[arg-type]
    "event": _Kind(EventRow.__table__, ("run_id", "sequence")),  # type: ignore[arg-type]
    "ledger": _Kind(ToolResultRow.__table__, ("idempotency_key",)),  # type: ignore[arg-type]
}


@dataclass(frozen=True)
class Part:
    """One row of a step: an insert (ignoring a duplicate key, `kind` one of INSERTS), or a
    guarded update whose statement `update` builds (the write fence's clear: its SQL stays
    with the fence). `fault` names a test fault point hit just before this part is written
    (on PostgreSQL, before the one statement: either way nothing of the step is committed
    when it fires)."""

    kind: str
    params: dict[str, Any]
    fault: str | None = None
    update: UpdateBuilder | None = None
