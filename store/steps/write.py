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
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Select, bindparam, func, literal_column, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable
from sqlalchemy.sql.dml import ReturningInsert

from agentrt.store.db.context import StoreContext, rowcount
from agentrt.store.steps.parts import INSERTS, Part, UpdateBuilder
from agentrt.store.steps.sqlite_view import carried, sqlite_step

# Part and UpdateBuilder are part of this module's interface to its callers.
__all__ = [
    "Part",
    "UpdateBuilder",
    "insert_returning",
    "one_statement",
    "one_update",
    "sqlite_insert",
    "steps_statement",
    "write_parts",
    "write_rows",
    "write_step",
    "write_steps",
]


def write_step(ctx: StoreContext, parts: Sequence[Part]) -> bool:
    """Write the parts, all or none. True when the first part, an insert, added its row
    (the others are written either way, each ignoring a duplicate). On SQLite through the
    view: True when the step changed a row, the same for a step of inserts (they land
    together), and True too when a fence clear it carries applied."""
    if ctx.postgres:  # one statement, in autocommit
        statement, params = one_statement(ctx, parts)
        with ctx.one_statement() as c:
            return bool(c.execute(statement, params).scalar())
    if carried(parts):  # SQLite: one statement too, through the view
        with ctx.one_statement() as c:
            return sqlite_step(ctx, c, [parts])
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
    if all(carried(step) for step in steps):
        with ctx.one_statement() as c:
            sqlite_step(ctx, c, steps)
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
    if carried(parts):
        return sqlite_step(ctx, connection, [parts])
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
    if not ctx.postgres and all(carried(step) for step in steps):
        sqlite_step(ctx, c, steps)
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
