"""What every store module shares: the session factory, the sealer and the fault hook."""

import functools
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Result
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.dml import Insert

from agentrt.store.sealing import Sealer

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
    # Read-only sessions (store.engine.make_read_sessionmaker); `sessions` when absent.
    read_sessions: sessionmaker[Session] | None = None
    # Sessions for one statement that writes (store.engine.make_statement_sessionmaker):
    # autocommit on PostgreSQL; a transaction of `sessions` when absent.
    statement_sessions: sessionmaker[Session] | None = None

    def reads(self) -> Session:
        """A session for reads only: on SQLite it takes no write lock."""
        return (self.read_sessions or self.sessions)()

    def one_statement(self) -> AbstractContextManager[Session]:
        """A session for ONE statement that writes and is atomic on its own: on PostgreSQL
        it runs in autocommit (no BEGIN and COMMIT round trips); a second statement in it
        would commit on its own, so use a transaction for anything more."""
        if self.statement_sessions is not None:
            return self.statement_sessions()
        return self.sessions.begin()

    @functools.cached_property
    def postgres(self) -> bool:
        bind = self.sessions.kw.get("bind")
        return bind is not None and bind.dialect.name == "postgresql"


def utcnow() -> datetime:
    return datetime.now(UTC)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def insert_ignoring(session: Session, table: Any, index: list[str]) -> Insert:
    """An INSERT that does nothing when the unique key already exists (both backends);
    execute it with the row's values as parameters: `s.execute(stmt, {...})`.

    Built once per backend, table and key: a statement built anew with `.values()` for
    every row cost about 90 µs of CPU each (its cache key is generated again), against
    about 15 µs to execute a built one, and an agent run inserts some twenty rows."""
    return _insert_ignoring(session.get_bind().dialect.name, table, tuple(index))


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
