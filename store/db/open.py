"""Open the store: connect (a clear error if the database is down), bring the schema to head
and hand back the context every store module shares. Used by workers, the CLI and the API."""

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from sqlalchemy import Engine, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from agentrt.contracts.errors import SchemaBehindError, StoreUnavailableError
from agentrt.store.db import migrate
from agentrt.store.db.context import StoreContext, no_faults
from agentrt.store.db.engine import (
    make_engine,
    make_read_sessionmaker,
    make_sessionmaker,
    make_statement_sessionmaker,
)
from agentrt.store.db.sealing import Sealer

WHICH_SETTING = "set AGENTRT_DATABASE_URL (or AGENTRT_DATA_DIR for the default SQLite file)"
MIGRATE_COMMAND = "agentrt migrate"


def open_store(
    url: str,
    sealer: Sealer,
    *,
    faults: Callable[[str], None] | None = None,
    run_migrations: bool = True,
) -> tuple[Engine, StoreContext]:
    """Connect (a clear error if the database is down) and bring the schema to head.

    Without `run_migrations` the store is a client's: the database must already exist with
    its schema, and nothing is created (SQLite would otherwise make an empty file).
    """
    if not run_migrations:
        _require_sqlite_file(url)
    engine, ctx = store_context(url, sealer, faults=faults)
    shown = engine.url.render_as_string(hide_password=True)
    migrated = _reach(engine)
    if run_migrations:
        migrate.upgrade(engine, sealer=sealer)  # 0008 seals the event rows that exist
    elif not migrated:
        engine.dispose()
        raise StoreUnavailableError(
            f"the database at {shown} has no agentrt schema: {WHICH_SETTING} to the "
            f"worker's database, or create the schema with `{MIGRATE_COMMAND}`"
        )
    return engine, ctx


def store_context(
    url: str, sealer: Sealer, *, faults: Callable[[str], None] | None = None
) -> tuple[Engine, StoreContext]:
    """The engine and the context every store module shares, without connecting: the
    engine's pool opens its first connection when something uses it (a worker's store is
    made when its plugin is, and reached when it runs: `check_worker_store`)."""
    engine = make_engine(url)
    ctx = StoreContext(
        make_sessionmaker(engine),
        sealer,
        faults or no_faults,
        read_sessions=make_read_sessionmaker(engine),
        statement_sessions=make_statement_sessionmaker(engine),
    )
    return engine, ctx


def check_worker_store(engine: Engine) -> None:
    """A worker's start: the database exists, answers, and its schema is at head. Creates
    nothing (SQLite would otherwise make an empty file) and migrates nothing."""
    path = _sqlite_file(engine.url.render_as_string(hide_password=False))
    if path is not None and not path.is_file():
        raise SchemaBehindError(
            f"no database at {path.resolve()}: run `{MIGRATE_COMMAND}` with the worker's "
            f"settings first (a worker never creates or migrates its database), or "
            f"{WHICH_SETTING}"
        )
    _reach(engine)
    require_schema(engine)


def require_schema(engine: Engine) -> None:
    """A worker's start check: the schema is at this release's head (or newer). A worker
    never migrates by itself; behind is a SchemaBehindError naming the command."""
    reason = migrate.behind(engine)
    if reason is None:
        return
    shown = engine.url.render_as_string(hide_password=True)
    raise SchemaBehindError(
        f"the database at {shown} is behind this release ({reason}): run "
        f"`{MIGRATE_COMMAND}` with the worker's settings first (a worker never migrates)"
    )


def probe_database(url: str) -> Literal["migrated", "empty", "absent"]:
    """Whether the database has the schema, is reachable but empty, or (a SQLite file) does
    not exist yet; creates nothing. Raises StoreUnavailableError when it cannot be reached."""
    if (path := _sqlite_file(url)) is not None and not path.is_file():
        return "absent"
    engine = make_engine(url)
    try:
        return "migrated" if _reach(engine) else "empty"
    finally:
        engine.dispose()


def _reach(engine: Engine) -> bool:
    """Connect once; True when the schema is there. Disposes the engine when it fails."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            return inspect(conn).has_table("alembic_version")
    except OperationalError as exc:
        engine.dispose()
        shown = engine.url.render_as_string(hide_password=True)
        reason = str(exc.orig or exc).strip().splitlines()[0][:200]
        raise StoreUnavailableError(
            f"cannot reach the database at {shown} ({reason}): {WHICH_SETTING}"
        ) from exc


def _sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _require_sqlite_file(url: str) -> None:
    path = _sqlite_file(url)
    if path is not None and not path.is_file():
        raise StoreUnavailableError(
            f"no database at {path.resolve()}: {WHICH_SETTING} to the worker's database, "
            "or create it with `agentrt migrate`"
        )
