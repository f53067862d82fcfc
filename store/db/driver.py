"""The hottest statements on the driver's cursor.

A run's most frequent store calls are one statement each: a model call's transcript read
(store/runs/record.py, turn_inputs) and a step's rows on PostgreSQL (store/steps/write.py,
write_step: the begin, every turn and every tool step). Through SQLAlchemy's Connection
each cost about 150-185 µs of CPU, most of it SQLAlchemy's execution path (the
connection, its execution context, the result's metadata, the checkin); the same SQL on a
pooled connection's DB-API cursor costs 85-110 µs (bench/store_calls.py; bench/HISTORY.md
set 16). Here:

- the statement is the same built SQLAlchemy statement, compiled once per dialect;
- the connection comes from the engine's own pool (its checkout ping and its bound), in
  the autocommit PostgreSQL's engine gives its connections (store/db/engine.py): one
  statement, atomic on its own, no BEGIN. SQLite's driver opens a transaction of its own
  before a write: it is committed here, so a statement that writes lands there too;
- SQLite's step writes (store/steps/write.py) take their BEGIN IMMEDIATE transaction here
  (`transaction`): a turn's record costs 81 µs of CPU on the cursor against 183 µs
  through SQLAlchemy's Connection (`python -m bench.store_calls --sqlite`);
- a column the statement leaves out takes its Python-side default, as SQLAlchemy gives it,
  and a value goes through its type's bind processor, as SQLAlchemy sends it (SQLite's
  datetimes as SQLAlchemy's text); rows come back as the driver gives them (no result
  processing: the callers read text and numbers);
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

from sqlalchemy import Connection, Engine
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.schema import ScalarElementColumnDefault

# (engine) -> who is told each SQL text this module sends on it.
StatementListener = Callable[[str], None]
Fetch = Callable[[Any], Any]
Bound = Mapping[str, Any] | Sequence[Any]
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
    processors: tuple[tuple[str, Callable[[Any], Any]], ...]  # the caller's values' (name, fn)


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
    defaults.update(_column_defaults(compiled))
    # A value the driver does not take as it is (SQLite's datetimes: SQLAlchemy stores them
    # as its own text, which every reader and comparison expects) goes through its type's
    # bind processor, as SQLAlchemy sends it.
    processors = {}
    for bind, name in compiled.bind_names.items():
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            processors[name] = process
    defaults = {k: _processed(processors, k, v) for k, v in defaults.items()}
    caller = tuple((name, process) for name, process in processors.items() if name in required)
    order = tuple(expanded.positiontup) if expanded.positiontup else None
    return _Compiled(expanded.statement, defaults, order, caller)


def _processed(processors: Mapping[str, Callable[[Any], Any]], name: str, value: Any) -> Any:
    process = processors.get(name)
    return value if process is None or value is None else process(value)


def _column_defaults(compiled: SQLCompiler) -> dict[str, Any]:
    """A column the statement does not set but whose Python-side default SQLAlchemy would
    fill at each execution (`default=0`): its bind takes that value here, or an insert
    would write NULL. A default computed per row (a callable) is refused: none is used."""
    found: dict[str, Any] = {}
    kinds = [(c, c.default) for c in compiled.insert_prefetch]
    kinds += [(c, c.onupdate) for c in compiled.update_prefetch]
    for column, default in kinds:
        if not isinstance(default, ScalarElementColumnDefault):
            raise ValueError(f"the driver's statements take no computed default ({column})")
        found[column.key] = default.arg
    return found


def rows(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> list[Any]:
    """Every row the statement returns, as tuples."""
    found: list[Any] = _one(engine, lambda cursor: cursor.rows(statement, params))
    return found


def scalar(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> Any:
    """The first column of the statement's first row (None for no row)."""
    return _one(engine, lambda cursor: cursor.scalar(statement, params))


def rowcount(engine: Engine, statement: Executable, params: Mapping[str, Any]) -> int:
    """How many rows the statement (an UPDATE, a DELETE) matched."""
    count: int = _one(engine, lambda cursor: cursor.rowcount(statement, params))
    return count


def _one(engine: Engine, call: Callable[["Cursor"], Any]) -> Any:
    """One statement on a pooled connection, committed if the driver began a transaction."""
    with Cursor(engine) as cursor:
        found = call(cursor)
        cursor.commit_if_open()
    return found


@contextmanager
def transaction(engine: Engine) -> Iterator["Cursor"]:
    """SQLite's write transactions on one pooled connection's cursor: BEGIN IMMEDIATE (the
    write lock first, as store/db/engine.py's transactions take it), the block's statements,
    COMMIT; ROLLBACK when the block raises (a fault point's exception included).
    PostgreSQL's writes are one statement each in autocommit: refused there."""
    if engine.dialect.name != "sqlite":
        raise ValueError("the driver's transactions are SQLite's")
    with Cursor(engine) as cursor:
        cursor.send("BEGIN IMMEDIATE")
        try:
            yield cursor
        except BaseException:
            cursor.abandon()
            raise
        cursor.send("COMMIT")


class Cursor:
    """A pooled connection's cursor (the pool's checkout events, store/db/engine.py, run): its
    statements' errors raised as SQLAlchemy raises them, a dropped connection invalidated.
    `joining` a SQLAlchemy Connection instead: its connection, in its transaction."""

    def __init__(self, engine: Engine, joined: PoolProxiedConnection | None = None) -> None:
        self._engine = engine
        self._own = joined is None  # checked out here, so returned (or dropped) here
        self._conn = engine.raw_connection() if joined is None else joined
        self._dropped = False
        try:
            self._cursor = self._conn.cursor()
        except engine.dialect.loaded_dbapi.Error as exc:
            error = self._error(exc, "", ())
            if self._own:
                self._conn.close()
            raise error from exc

    @classmethod
    def joining(cls, connection: Connection) -> "Cursor":
        """Statements inside a SQLAlchemy Connection's transaction: its BEGIN, its COMMIT
        or ROLLBACK, and its Session for whoever needs one (a completion hook). The
        Connection's owner ends it, a dropped one included."""
        return cls(connection.engine, connection.connection)

    def __enter__(self) -> "Cursor":
        return self

    def __exit__(self, *_exc: object) -> None:
        try:
            if not self._dropped:
                self._cursor.close()
        finally:
            if self._own:
                self._conn.close()  # back to the pool (or gone, if invalidated)

    def run(self, statement: Executable, params: Mapping[str, Any], fetch: Fetch) -> Any:
        c = _compiled(statement, self._engine.dialect)
        named = {**c.defaults, **params}
        for name, process in c.processors:
            if named.get(name) is not None:
                named[name] = process(named[name])
        bound = named if c.order is None else [named[name] for name in c.order]
        return self.send(c.sql, bound, fetch)

    def rows(self, statement: Executable, params: Mapping[str, Any]) -> list[Any]:
        """Every row, read to the end (SQLite finishes a RETURNING statement only once its
        rows are)."""
        found: list[Any] = self.run(statement, params, lambda cur: cur.fetchall())
        return found

    def scalar(self, statement: Executable, params: Mapping[str, Any]) -> Any:
        """The first column of the first row (None for no row)."""
        found = self.rows(statement, params)
        return found[0][0] if found else None

    def first(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Any] | None:
        """The statement's first row, as a tuple (None for no row)."""
        found = self.rows(statement, params)
        return tuple(found[0]) if found else None

    def rowcount(self, statement: Executable, params: Mapping[str, Any]) -> int:
        count: int = self.run(statement, params, lambda cur: cur.rowcount)
        return count

    def send(self, sql: str, bound: Bound = (), fetch: Fetch | None = None) -> Any:
        for listener in _listeners.get(self._engine, ()):
            listener(sql)
        try:
            self._cursor.execute(sql, bound)
            return None if fetch is None else fetch(self._cursor)
        except self._engine.dialect.loaded_dbapi.Error as exc:
            raise self._error(exc, sql, bound) from exc

    def commit_if_open(self) -> None:
        try:
            _commit_if_open(self._conn.dbapi_connection)
        except self._engine.dialect.loaded_dbapi.Error as exc:
            raise self._error(exc, "COMMIT", ()) from exc

    def abandon(self) -> None:
        """Roll the open transaction back; on a connection that cannot, drop it."""
        if self._dropped:
            return
        try:
            self.send("ROLLBACK")
        except DBAPIError as exc:
            if not self._dropped:
                self._dropped = True
                self._conn.invalidate(exc.orig)

    def _error(self, exc: Any, sql: str, bound: Bound) -> DBAPIError:
        dialect = self._engine.dialect
        dropped = dialect.is_disconnect(exc, self._conn.dbapi_connection, None)
        if dropped and self._own and not self._dropped:
            self._dropped = True
            self._conn.invalidate(exc)  # closed, not returned to the pool for the next call
        error = DBAPIError.instance(
            sql, bound, exc, dialect.loaded_dbapi.Error, dialect=dialect,
            connection_invalidated=dropped,
        )  # fmt: skip
        return cast(DBAPIError, error)  # a driver's own error is always wrapped as one


def _commit_if_open(conn: Any) -> None:
    """Commit what the driver began: SQLite's before a write (`in_transaction`), and
    psycopg's on a connection not in autocommit (an engine not built by make_engine):
    else the pool's reset on checkin would roll the statement back."""
    if getattr(conn, "in_transaction", False) or getattr(conn, "autocommit", True) is False:
        conn.commit()
