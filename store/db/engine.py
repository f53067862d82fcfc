"""Engine factory. No engine exists at import time; entry points build one from settings."""

import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from agentrt.core.private import tighten_sqlite

READ_ONLY_OPTION = "agentrt_read_only"
# A connection for one statement (or reads) that sends no BEGIN (store engines only).
AUTOCOMMIT_OPTION = "agentrt_autocommit"

# What SQLAlchemy raises when the database cannot serve a statement: away, refusing,
# dropping connections (or locked, or not migrated: the first line says which).
DATABASE_ERRORS = (OperationalError, InterfaceError, DisconnectionError)


def database_reason(exc: BaseException) -> str:
    """The first line of a database error, for one line of a log."""
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """Create an engine tuned for its backend.

    SQLite: WAL, a busy timeout, and `BEGIN IMMEDIATE` so that a write transaction takes the
    database write lock up front; that is SQLite's form of a row lock and keeps two
    processes from interleaving a guarded read-then-write.
    """
    if url.startswith("sqlite"):
        return _sqlite_engine(url, echo=echo)
    # PostgreSQL: every pooled connection is in the driver's autocommit, set once when it
    # connects, and a transaction's BEGIN is sent here, as SQLite's engine sends its own;
    # a connection for one statement (AUTOCOMMIT_OPTION) sends none. Autocommit as an
    # isolation_level *option* instead made SQLAlchemy set it on every checkout and reset
    # it on every checkin, four driver calls under the connection's lock: about 70 µs of
    # CPU per store call (bench/store_calls.py; bench/HISTORY.md set 11).
    engine = create_engine(
        url, echo=echo, pool_size=10, max_overflow=10, isolation_level="AUTOCOMMIT"
    )

    @event.listens_for(engine, "begin")
    def _on_pg_begin(conn: Any) -> None:
        if not in_autocommit(conn):
            conn.exec_driver_sql("BEGIN")

    _ping_after_idle(engine)
    return engine


def _sqlite_engine(url: str, *, echo: bool) -> Engine:
    """`make_engine`'s SQLite engine: WAL, a busy timeout, `BEGIN IMMEDIATE` for a write
    transaction, no BEGIN for one statement in autocommit."""
    database = make_url(url).database
    file = Path(database) if database and database != ":memory:" else None
    engine = create_engine(
        url,
        echo=echo,
        connect_args={"check_same_thread": False, "timeout": 30},
        isolation_level=None,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        if file is not None:
            # Opened (so created) by now, before WAL: SQLite gives the -wal and -shm
            # files the database file's mode, so they are 0600 too.
            tighten_sqlite(file)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()
        # The driver begins nothing on its own (the recipe in SQLAlchemy's SQLite
        # notes): every transaction's BEGIN is the one `_on_begin` sends, and a
        # connection in autocommit (AUTOCOMMIT_OPTION) runs its one statement as SQLite
        # runs any statement outside a transaction, atomic on its own.
        dbapi_conn.isolation_level = None

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A connection for one statement (reads included) sends no BEGIN: the statement
        # is its own transaction. A statement that writes takes the write lock as it
        # starts, waiting through the busy timeout, as BEGIN IMMEDIATE would; a read
        # takes none and reads one consistent snapshot. A read-only session
        # (READ_ONLY_OPTION alone) takes no write lock either: in WAL mode a deferred
        # BEGIN reads a consistent snapshot without waiting for writers, and never makes
        # them wait. Every other transaction may write and locks up front.
        if in_autocommit(conn):
            return
        read_only = conn.get_execution_options().get(READ_ONLY_OPTION, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def in_autocommit(conn: Any) -> bool:
    """Whether a connection runs its statements in autocommit (one-statement and read
    connections on PostgreSQL): no BEGIN, no COMMIT."""
    return bool(conn.get_execution_options().get(AUTOCOMMIT_OPTION, False))


# A pooled connection idle longer than this is pinged before it is handed out.
PING_IDLE_SECONDS = 1.0


def _ping_after_idle(engine: Engine) -> None:
    """Pessimistic disconnect handling for connections that sat in the pool, without a round
    trip for every checkout (`pool_pre_ping` pings each one: about 0.2 ms, and a run checks
    out some twenty). A connection back within the second is handed out as is: should the
    server have gone meanwhile, its first statement fails as StoreUnavailable, SQLAlchemy
    invalidates the whole pool, and the step is retried like any store outage (the write's
    record step retries itself: activities/fence)."""

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info["agentrt_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("agentrt_idle_since")
        if since is None or time.monotonic() - since < PING_IDLE_SECONDS:
            return
        try:
            cur = dbapi_conn.cursor()
            try:
                cur.execute("SELECT 1")
            finally:
                cur.close()
            dbapi_conn.rollback()  # end the ping's implicit transaction
        except Exception as exc:
            # The pool discards this connection and checks out another (a fresh one).
            raise DisconnectionError(type(exc).__name__) from exc


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def make_read_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions for reads only (same pool), one statement each, in autocommit on both
    backends: one statement is consistent on its own, and it saves the BEGIN (and on
    PostgreSQL the BEGIN and ROLLBACK round trips: every model call reads its transcript
    here); two statements in one such session would not share a snapshot. A session from
    here must never write (on SQLite it takes no write lock)."""
    return sessionmaker(engine.execution_options(**{READ_ONLY_OPTION: True,
                                                    AUTOCOMMIT_OPTION: True}))  # fmt: skip


def make_statement_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions in autocommit for a write that is one statement (a guarded UPDATE; on
    PostgreSQL a step's rows as one statement: store/steps/write.py), atomic on its own,
    which saves the BEGIN (on PostgreSQL the BEGIN and COMMIT round trips). On SQLite the
    statement takes the write lock as it starts, through the busy timeout, as BEGIN
    IMMEDIATE does."""
    return sessionmaker(engine.execution_options(**{AUTOCOMMIT_OPTION: True}))


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"
