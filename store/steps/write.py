"""A step's rows written in one round trip.

Every model and tool step writes two to four rows (the run, a message, an event, the dedup
ledger, a guarded update: the write fence's clear), and each needs all of them or none. On
PostgreSQL every statement is a round trip, and a transaction adds two more (BEGIN,
COMMIT): a model step's two inserts cost four. There the rows go as ONE statement,
data-modifying CTEs under one SELECT, in autocommit: a single statement is atomic on its
own, so all of them land or none does, as in the transaction, for a quarter of the round
trips. SQLite has no DML in CTEs: there the rows go as one INSERT of one row into a view,
`agentrt_step`, whose INSTEAD OF trigger writes each part (migration 0021), also one
statement in autocommit.

Each part's statement is built once per backend and part list, with bind names prefixed by
the part (`message_run_id`, ...): a column's own name is reserved in its VALUES clause.
"""

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    Table,
    TableClause,
    bindparam,
    column,
    func,
    insert,
    literal_column,
    null,
    select,
    table,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable
from sqlalchemy.sql.dml import ReturningInsert, Update

from agentrt.store.db.context import StoreContext, rowcount
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


def write_step(ctx: StoreContext, parts: Sequence[Part]) -> bool:
    """Write the parts, all or none. True when the first part, an insert, added its row
    (the others are written either way, each ignoring a duplicate). On SQLite through the
    view: True when the step changed a row, the same for a step of inserts (they land
    together), and True too when a fence clear it carries applied."""
    if ctx.postgres:  # one statement, in autocommit
        statement, params = one_statement(ctx, parts)
        with ctx.one_statement() as c:
            return bool(c.execute(statement, params).scalar())
    if _carried(parts):  # SQLite: one statement too, through the view
        with ctx.one_statement() as c:
            return _sqlite_step(ctx, c, [parts])
    with ctx.transaction() as c:  # BEGIN IMMEDIATE
        return write_parts(ctx, c, parts)


def write_steps(ctx: StoreContext, steps: Sequence[Sequence[Part]]) -> None:
    """Several steps' parts, all or none, as one write: a model turn and the reads that ride
    with it (contracts/deferred.py), in sequence order. One statement in autocommit on
    PostgreSQL (each part its CTE, binds prefixed per step) and on SQLite when the view
    carries them all (one row each, inserted in order: the event positions follow it); else
    one transaction."""
    if len(steps) == 1:
        write_step(ctx, steps[0])
        return
    if ctx.postgres:
        statement, params = steps_statement(ctx, steps)
        with ctx.one_statement() as c:
            c.execute(statement, params)
        return
    if all(_carried(step) for step in steps):
        with ctx.one_statement() as c:
            _sqlite_step(ctx, c, steps)
        return
    with ctx.transaction() as c:
        write_rows(ctx, c, steps)


def steps_statement(
    ctx: StoreContext, steps: Sequence[Sequence[Part]]
) -> tuple[Select[Any], dict[str, Any]]:
    """PostgreSQL: several steps' parts (or one step's) as one statement and its params
    (faults hit first); step j's binds are prefixed `s{j}_{kind}_`."""
    for part in (p for step in steps for p in step):
        if part.fault is not None:
            ctx.faults(part.fault)
    shape = tuple(tuple((p.kind, tuple(sorted(p.params)), p.update) for p in step)
                  for step in steps)  # fmt: skip
    params = {f"s{j}_{p.kind}_{k}": v for j, step in enumerate(steps) for p in step
              for k, v in p.params.items()}  # fmt: skip
    return _combined_steps(shape), params


@functools.cache
def _combined_steps(
    steps: tuple[tuple[tuple[str, tuple[str, ...], UpdateBuilder | None], ...], ...],
) -> Select[Any]:
    """PostgreSQL: one SELECT whose CTEs write every part of every step (each step writing
    each kind of row once); it counts the first part's new rows (RETURNING: psycopg reports
    no rowcount for ON CONFLICT DO NOTHING)."""
    ctes = []
    for j, parts in enumerate(steps):
        if len({kind for kind, _, _ in parts}) != len(parts):
            raise ValueError("a step writes each kind of row once")
        for i, (kind, columns, build) in enumerate(parts):
            prefix, name = f"s{j}_{kind}_", f"{kind}_{j}_{i}"
            if build is not None:  # a data-modifying CTE needs a RETURNING to be one
                ctes.append(build(prefix).returning(literal_column("1")).cte(name))
            else:
                ctes.append(insert_returning(kind, columns, prefix).cte(name))
    counted = select(func.count()).select_from(ctes[0])
    return counted.add_cte(*ctes[1:]) if len(ctes) > 1 else counted


def one_update(ctx: StoreContext, statement: Executable, params: dict[str, Any]) -> int:
    """A guarded UPDATE on its own (the fence's stamp and claim): the rows it matched, one
    statement in autocommit (on SQLite it takes the write lock as it starts, as BEGIN
    IMMEDIATE does)."""
    with ctx.one_statement() as c:
        return rowcount(c.execute(statement, params))


def write_parts(ctx: StoreContext, s: Session | Connection, parts: Sequence[Part]) -> bool:
    """The parts in a session or connection the caller holds (and commits): one statement
    (on SQLite through the view, `_sqlite_step`), or on SQLite one statement each for
    parts the view does not carry. Returns as write_step does."""
    connection = s.connection() if isinstance(s, Session) else s
    if ctx.postgres:
        statement, params = one_statement(ctx, parts)
        return bool(connection.execute(statement, params).scalar())
    if _carried(parts):
        return _sqlite_step(ctx, connection, [parts])
    added = False
    for i, part in enumerate(parts):
        if part.fault is not None:
            ctx.faults(part.fault)
        if part.update is not None:
            connection.execute(_sqlite_update(part.update), part.params)
            continue
        insert = sqlite_insert(part.kind, tuple(sorted(part.params)), returning=i == 0)
        result = connection.execute(insert, {f"{part.kind}_{k}": v for k, v in part.params.items()})
        if i == 0:  # only the first part says whether it added its row (RETURNING)
            added = result.first() is not None
    return added


def write_rows(ctx: StoreContext, c: Connection, steps: Sequence[Sequence[Part]]) -> None:
    """Several steps' parts (a completion's turn and its run_completed event) in a
    connection the caller holds: on SQLite one INSERT through the view when it carries
    them all, else each step as `write_parts`."""
    if not ctx.postgres and all(_carried(step) for step in steps):
        _sqlite_step(ctx, c, steps)
        return
    for step in steps:
        write_parts(ctx, c, step)


def one_statement(ctx: StoreContext, parts: Sequence[Part]) -> tuple[Select[Any], dict[str, Any]]:
    """PostgreSQL: the parts' one statement and its params (the parts' faults hit first)."""
    return steps_statement(ctx, [parts])


@functools.cache
def _sqlite_update(build: UpdateBuilder) -> Executable:
    return build("").execution_options(synchronize_session=False)


def insert_returning(
    kind_name: str, columns: Sequence[str], prefix: str
) -> ReturningInsert[tuple[Any]]:
    """PostgreSQL: the part's insert, ignoring a duplicate key, returning its key's first
    column for each row it added. Binds each column as `{prefix}{column}`."""
    kind = INSERTS[kind_name]
    return (
        postgresql.insert(kind.table)
        .values({c: bindparam(f"{prefix}{c}") for c in columns})
        .on_conflict_do_nothing(index_elements=list(kind.key))
        .returning(kind.table.c[kind.key[0]])
    )


@functools.cache
def sqlite_insert(kind_name: str, columns: tuple[str, ...], *, returning: bool) -> Executable:
    """SQLite: the part's insert of `columns`, ignoring a duplicate key (returning its key's
    first column when it added the row), built once; binds as `{kind}_{column}`."""
    kind = INSERTS[kind_name]
    insert = (
        sqlite.insert(kind.table)
        .values({c: bindparam(f"{kind_name}_{c}") for c in columns})
        .on_conflict_do_nothing(index_elements=list(kind.key))
    )
    return insert.returning(kind.table.c[kind.key[0]]) if returning else insert


# SQLite: the view a step's parts go through (migration 0021), and the columns it carries
# per kind (frozen there): a part with other columns is written the old way. Its `clear` is
# the write fence's (activities/fence/_sql.clear_part): the trigger's UPDATE is `_clear`'s.
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


def _carried(parts: Sequence[Part]) -> bool:
    """Whether the view writes these parts as one row: each kind once, with the view's
    columns of its kind (an update only as the fence's clear)."""
    kinds = [p.kind for p in parts]
    return len(set(kinds)) == len(kinds) and all(
        (p.update is None) == (p.kind != "clear")
        and p.params.keys() == SQLITE_VIEW_COLUMNS.get(p.kind, ())
        for p in parts
    )


def _sqlite_step(ctx: StoreContext, connection: Connection, rows: Sequence[Sequence[Part]]) -> bool:
    """SQLite: each row's parts (each row `_carried`) as one INSERT of those rows into the
    view (the parts' faults hit first). True when it changed a row: a trigger's writes
    report no row to their statement, so the connection's count of changed rows says it
    (a step's rows land together or not at all: the first part's row is new exactly when
    the step's are)."""
    for part in (p for row in rows for p in row):
        if part.fault is not None:
            ctx.faults(part.fault)
    shape = tuple(tuple((p.kind, tuple(sorted(p.params))) for p in row) for row in rows)
    params = {f"r{i}_{p.kind}_{k}": v for i, row in enumerate(rows) for p in row
              for k, v in p.params.items()}  # fmt: skip
    driver: Any = connection.connection.driver_connection  # sqlite3.Connection
    before = driver.total_changes
    connection.execute(_view_insert(shape), params)
    return bool(driver.total_changes - before)


def _column_type(kind: str, name: str) -> Any:
    return _CLEAR_TYPES[name] if kind == "clear" else INSERTS[kind].table.c[name].type


@functools.cache
def _view_insert(rows: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]) -> Executable:
    """The view's INSERT of `rows` (each its parts' kinds and columns), binding each row's
    columns as `r{row}_{kind}_{column}`; a column a row does not carry is NULL in it."""
    types = {f"{k}_{c}": _column_type(k, c) for row in rows for k, cs in row for c in cs}
    view: TableClause = table(SQLITE_STEP_VIEW, *(column(n, t) for n, t in types.items()))
    values = [
        {n: bindparam(f"r{i}_{n}", type_=t) if n in carried else null() for n, t in types.items()}
        for i, carried in enumerate({f"{k}_{c}" for k, cs in row for c in cs} for row in rows)
    ]
    return insert(view).values(values)
