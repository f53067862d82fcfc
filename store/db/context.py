"""What every store module shares: the session factory, the sealer and the fault hook."""

import functools
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Result
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.dml import Insert

from agentrt.store.db.sealing import Sealer

FaultHook = Callable[[str], None]


@dataclass(frozen=True)
class CompletionHook:
    """Called inside the completion transaction as `call(session, run_id, answer)`; raising
    rolls the whole completion back (e.g. an A2A task whose result must be stored with it).

    `applies`, when given, is a scalar subquery correlated on the run row (agent_run.id):
    the completion reads it in the same statement as the row, and calls the hook only when
    it is not NULL (most runs serve no A2A task: no statement of the hook's own for them)."""

    call: Callable[[Session, str, str], None]
    applies: Any = None


def no_faults(_point: str) -> None:
    """Production fault hook: does nothing."""


@dataclass(frozen=True)
class StoreContext:
    sessions: sessionmaker[Session]
    sealer: Sealer
    # Test-only: called at named points inside transactions (see workers.faults).
    faults: FaultHook = field(default=no_faults)
    completion_hooks: tuple[CompletionHook, ...] = ()
    # Read-only sessions (store.db.engine.make_read_sessionmaker); `sessions` when absent.
    read_sessions: sessionmaker[Session] | None = None
    # Sessions for one statement that writes (store.db.engine.make_statement_sessionmaker):
    # autocommit on PostgreSQL; a transaction of `sessions` when absent.
    statement_sessions: sessionmaker[Session] | None = None

    def reads(self) -> Session:
        """A session for reads only: on SQLite it takes no write lock."""
        return (self.read_sessions or self.sessions)()

    # The hot steps of a run (a turn's rows, its transcript, the fence's guarded writes)
    # run their built Core statements on a Connection rather than through a Session: the
    # same SQL and the same transaction, without the ORM's bookkeeping, which measured
    # about 160 µs of CPU per write transaction on SQLite (of about 600) and 120 µs per
    # read (of about 370).

    def read_rows(self) -> AbstractContextManager[Connection]:
        """A connection for reads only (as `reads`), for Core statements."""
        return _bind(self.read_sessions or self.sessions).connect()

    def transaction(self) -> AbstractContextManager[Connection]:
        """A connection in a write transaction, committed at the end (rolled back on an
        error), for Core statements: on SQLite a BEGIN IMMEDIATE, as every session's."""
        return _bind(self.sessions).begin()

    def one_statement(self) -> AbstractContextManager[Connection]:
        """A connection for ONE statement that writes and is atomic on its own: it runs in
        autocommit (no BEGIN; on PostgreSQL no BEGIN and COMMIT round trips); a second
        statement in it would commit on its own, so use a transaction for anything more."""
        if self.statement_sessions is not None:
            return _bind(self.statement_sessions).connect()
        return self.transaction()

    @functools.cached_property
    def engine(self) -> Engine:
        """The engine of `sessions`."""
        return _bind(self.sessions)

    @functools.cached_property
    def postgres(self) -> bool:
        bind = self.sessions.kw.get("bind")
        return bind is not None and bind.dialect.name == "postgresql"

    @functools.cached_property
    def sqlite_file(self) -> str | None:
        """The SQLite database's file (None in memory, or on PostgreSQL)."""
        bind = self.sessions.kw.get("bind")
        if not isinstance(bind, Engine) or bind.dialect.name != "sqlite":
            return None
        return bind.url.database


def _bind(maker: sessionmaker[Session]) -> Engine:
    bind = maker.kw.get("bind")
    if not isinstance(bind, Engine):
        raise TypeError("the store's sessionmakers are bound to an engine")
    return bind


def utcnow() -> datetime:
    return datetime.now(UTC)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def insert_ignoring(session: Session | Connection, table: Any, index: list[str]) -> Insert:
    """An INSERT that does nothing when the unique key already exists (both backends);
    execute it with the row's values as parameters: `s.execute(stmt, {...})`.

    Built once per backend, table and key: a statement built anew with `.values()` for
    every row cost about 90 µs of CPU each (its cache key is generated again), against
    about 15 µs to execute a built one, and an agent run inserts some twenty rows."""
    bind = session if isinstance(session, Connection) else session.get_bind()
    return _insert_ignoring(bind.dialect.name, table, tuple(index))


@functools.cache
def _insert_ignoring(dialect: str, table: Any, index: tuple[str, ...]) -> Insert:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return insert(table).on_conflict_do_nothing(index_elements=list(index))


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def rowcount(result: Result[Any]) -> int:
    """Rows matched by an UPDATE/INSERT: how a guarded write learns whether it won."""
    return int(getattr(result, "rowcount", 0))
