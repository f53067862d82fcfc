"""SQLite: a step's rows as one INSERT into the view `agentrt_step` (migration 0021), whose
INSTEAD OF trigger writes each part: one statement in autocommit, all of the rows or none.

The INSERT is built once per shape (the parts' kinds and columns of each row) and executed
as a textual statement with typed binds. Built with SQLAlchemy's multi-row VALUES, the
statement has no cache key, so SQLAlchemy compiled it again at every call (about 0.3 ms of
CPU, half of a model turn's record: `python -m bench.store_calls --sqlite`); a textual
statement with the same SQL and the same bind types is cached like any other.
"""

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, TableClause, bindparam, column, insert, null, table, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql.elements import TextClause

from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import RunRow
from agentrt.store.steps.parts import INSERTS, Part

# The view and the columns it carries per kind (frozen in migration 0021): a part with
# other columns is written the old way. Its `clear` is the write fence's
# (activities/fence/_sql.clear_part): the trigger's UPDATE is `_clear`'s.
SQLITE_STEP_VIEW = "agentrt_step"
SQLITE_VIEW_COLUMNS: dict[str, frozenset[str]] = {
    "run": frozenset({"id", "profile", "status", "iterations", "truncated", "prompt_tokens",
                      "completion_tokens", "snapshot", "initiator", "created_at", "updated_at",
                      "revision", "parent_run_id"}),
    "message": frozenset({"run_id", "sequence", "role", "body"}),
    "event": frozenset({"run_id", "sequence", "kind", "round", "duration_ms", "payload",
                        "created_at"}),
    "ledger": frozenset({"idempotency_key", "run_id", "call_id", "tool", "effect", "is_error",
                         "content", "created_at"}),
    "clear": frozenset({"run_id", "token", "now"}),
}  # fmt: skip
_CLEAR_TYPES = {"run_id": RunRow.id.type, "token": RunRow.pending_token.type,
                "now": RunRow.updated_at.type}  # fmt: skip
# Renders bind names as `:name`, which a textual statement reads back as its binds.
_NAMED = sqlite.dialect(paramstyle="named")

Shape = tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]


def carried(parts: Sequence[Part]) -> bool:
    """Whether the view writes these parts as one row: each kind once, with the view's
    columns of its kind (an update only as the fence's clear)."""
    kinds = [p.kind for p in parts]
    return len(set(kinds)) == len(kinds) and all(
        (p.update is None) == (p.kind != "clear")
        and p.params.keys() == SQLITE_VIEW_COLUMNS.get(p.kind, ())
        for p in parts
    )


def sqlite_step(ctx: StoreContext, connection: Connection, rows: Sequence[Sequence[Part]]) -> bool:
    """Each row's parts (each row `carried`) as one INSERT of those rows into the view (the
    parts' faults hit first). True when it changed a row: a trigger's writes report no row
    to their statement, so the connection's count of changed rows says it (a step's rows
    land together or not at all: the first part's row is new exactly when the step's are)."""
    for part in (p for row in rows for p in row):
        if part.fault is not None:
            ctx.faults(part.fault)
    shape = tuple(tuple((p.kind, tuple(sorted(p.params))) for p in row) for row in rows)
    params = {f"r{i}_{p.kind}_{k}": v for i, row in enumerate(rows) for p in row
              for k, v in p.params.items()}  # fmt: skip
    driver: Any = connection.connection.driver_connection  # sqlite3.Connection
    before = driver.total_changes
    connection.execute(view_insert(shape), params)
    return bool(driver.total_changes - before)


def _column_type(kind: str, name: str) -> Any:
    return _CLEAR_TYPES[name] if kind == "clear" else INSERTS[kind].table.c[name].type


@functools.cache
def view_insert(rows: Shape) -> TextClause:
    """The view's INSERT of `rows` (each its parts' kinds and columns), binding each row's
    columns as `r{row}_{kind}_{column}` with its column's type; a column a row does not
    carry is NULL in it."""
    types = {f"{k}_{c}": _column_type(k, c) for row in rows for k, cs in row for c in cs}
    view: TableClause = table(SQLITE_STEP_VIEW, *(column(n, t) for n, t in types.items()))
    binds = {}
    values = []
    for i, row in enumerate(rows):
        names = {f"{k}_{c}" for k, cs in row for c in cs}
        for n in names:
            binds[f"r{i}_{n}"] = bindparam(f"r{i}_{n}", type_=types[n])
        values.append({n: binds[f"r{i}_{n}"] if n in names else null() for n in types})
    sql = str(insert(view).values(values).compile(dialect=_NAMED))
    return text(sql).bindparams(*binds.values())
