"""The hottest statements on the driver's cursor.

A run's most frequent store calls are one statement each: a model call's transcript read
(store/runs.py, turn_inputs) and a step's rows on PostgreSQL (store/step_rows.py,
write_step: the begin, every turn and every tool step). Through SQLAlchemy's Connection
each cost about 150-185 µs of CPU, most of it SQLAlchemy's execution path (the
connection, its execution context, the result's metadata, the checkin); the same SQL on a
pooled connection's DB-API cursor costs 85-110 µs (bench/store_calls.py; bench/HISTORY.md
set 16). Here:

- the statement is the same built SQLAlchemy statement, compiled once per dialect;
- the connection comes from the engine's own pool (its checkout ping and its bound), in
  the autocommit PostgreSQL's engine gives its connections (store/engine.py): one
  statement, atomic on its own, no BEGIN. SQLite's driver opens a transaction of its own
  before a write: it is committed here, so a statement that writes lands there too (the
  store's SQLite writes still take BEGIN IMMEDIATE transactions: store/step_rows.py);
- a driver error is raised as SQLAlchemy raises it (`DBAPIError.instance`: OperationalError
  for a database that is away, IntegrityError for a refused row), so every caller and the
  StoreUnavailable mapping see what they saw before; a dropped connection is invalidated,
  never handed out again.

SQLAlchemy's engine events do not fire for these statements: whoever counts statements
(the step-rows tests, bench/sqlcount.py) listens here too (`listen`).
"""

import functools
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler

# (engine) -> who is told each SQL text this module sends on it.
StatementListener = Callable[[str], None]
_listeners: "weakref.WeakKeyDictionary[Engine, list[StatementListener]]" = (
    weakref.WeakKeyDictionary()
)


@contextmanager
def listen(engine: Engine, listener: StatementListener) -> Iterator[None]:
    """`listener(sql)` for every statement sent here on `engine`, inside the block."""
    listeners = _listeners.setdefault(engine, [])
    listeners.append(listener)
    try:
        yield
    finally:
        listeners.remove(listener)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    defaults: dict[str, Any]  # the statement's own bound values (a literal's, say)
    order: tuple[str, ...] | None  # positional paramstyle (SQLite's `?`): names in order


@functools.lru_cache(maxsize=256)  # a worker's statements are a few dozen; tests make more
def _compiled(statement: Executable, dialect: Dialect) -> _Compiled:
    """The statement's SQL for `dialect`, built once: the statements passed here are
    module constants or built once themselves (step_rows._combined).

    An IN over a constant list (`status.in_(NON_TERMINAL)`) is an "expanding" parameter
    that SQLAlchemy renders at each execution, one bind per item: rendered here once, as
    the list is the statement's own. An IN over a list the caller passes is refused."""
    compiled = cast(SQLCompiler, cast(ClauseElement, statement).compile(dialect=dialect))
    required = {name for bind, name in compiled.bind_names.items() if bind.required}
    if any(bind.expanding and bind.required for bind in compiled.bind_names):
        raise ValueError("the driver's statements take no IN list from the caller")
    # Every value the caller passes stands in as None: its bind is the same either way.
    expanded = compiled.construct_expanded_state(dict.fromkeys(required))
    defaults = {k: v for k, v in expanded.parameters.items() if k not in required}
    order = tuple(expanded.positiontup) if expanded.positiontup else None
    return _Compiled(expanded.statement, defaults, order)


def rows(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> list[Any]:
    """Every row the statement returns, as tuples."""
    found: list[Any] = _run(engine, statement, params, lambda cur: cur.fetchall())
    return found


def scalar(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> Any:
    """The first column of the statement's first row (None for no row)."""

    def first(cur: Any) -> Any:
        row = cur.fetchone()
        return None if row is None else row[0]

    return _run(engine, statement, params, first)


def rowcount(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> int:
    """How many rows the statement (an UPDATE, a DELETE) matched."""
    count: int = _run(engine, statement, params, lambda cur: cur.rowcount)
    return count


def _run(
    engine: Engine,
    statement: Executable,
    params: Mapping[str, Any],
    fetch: Callable[[Any], Any],
) -> Any:
    c = _compiled(statement, engine.dialect)
    named = {**c.defaults, **params}
    bound: Mapping[str, Any] | Sequence[Any] = (
        named if c.order is None else [named[name] for name in c.order]
    )
    for listener in _listeners.get(engine, ()):
        listener(c.sql)
    conn = engine.raw_connection()  # the pool's checkout events (store/engine.py) run
    try:
        cursor = conn.cursor()
        try:
            cursor.execute(c.sql, bound)
            found = fetch(cursor)
            _commit_if_open(conn.dbapi_connection)
        finally:
            cursor.close()
    except engine.dialect.loaded_dbapi.Error as exc:
        dropped = engine.dialect.is_disconnect(exc, conn.dbapi_connection, None)
        if dropped:
            conn.invalidate(exc)  # closed, not returned to the pool for the next call
        raise DBAPIError.instance(
            c.sql,
            bound,
            exc,
            engine.dialect.loaded_dbapi.Error,
            dialect=engine.dialect,
            connection_invalidated=dropped,
        ) from exc
    finally:
        conn.close()  # back to the pool (or gone, if invalidated)
    return found


def _commit_if_open(conn: Any) -> None:
    """Commit what the driver began: SQLite's before a write (`in_transaction`), and
    psycopg's on a connection not in autocommit (an engine not built by make_engine):
    else the pool's reset on checkin would roll the statement back."""
    if getattr(conn, "in_transaction", False) or getattr(conn, "autocommit", True) is False:
        conn.commit()
