"""Engine factory. No engine exists at import time; entry points build one from settings."""

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

READ_ONLY_OPTION = "agentrt_read_only"


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """Create an engine tuned for its backend.

    SQLite: WAL, a busy timeout, and `BEGIN IMMEDIATE` so that a write transaction takes the
    database write lock up front; that is SQLite's form of a row lock and keeps two
    processes from interleaving a guarded read-then-write.
    """
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            echo=echo,
            connect_args={"check_same_thread": False, "timeout": 30},
            isolation_level=None,
        )

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Any) -> None:
            # A read-only session (make_read_sessionmaker) takes no write lock: in WAL mode
            # a deferred BEGIN reads a consistent snapshot without waiting for writers, and
            # never makes them wait. Every other transaction may write and locks up front.
            read_only = conn.get_execution_options().get(READ_ONLY_OPTION, False)
            conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

        return engine
    return create_engine(url, echo=echo, pool_pre_ping=True, pool_size=10, max_overflow=10)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def make_read_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions for reads only (same pool), one statement each. On SQLite they begin
    DEFERRED, not IMMEDIATE: a session from here must never write (SQLite would refuse the
    upgrade under load). On PostgreSQL they run in autocommit: one statement is consistent
    on its own, and it saves the BEGIN and ROLLBACK round trips (every model call reads its
    transcript here); two statements in one such session would not share a snapshot."""
    options: dict[str, object] = {READ_ONLY_OPTION: True}
    if is_postgres(engine):
        options["isolation_level"] = "AUTOCOMMIT"
    return sessionmaker(engine.execution_options(**options))


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"
