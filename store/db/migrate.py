"""Run Alembic migrations programmatically on an engine (worker start-up, tests, CLI).

Processes that start together on a fresh database (docker-compose starts the worker and
the API at once) all upgrade; the upgrade is serialized so the second one finds the schema
at head instead of racing the first one's CREATE TABLE (PostgreSQL: UniqueViolation on
pg_type). PostgreSQL: a transaction-scoped advisory lock keyed by the schema, taken in the
upgrade's own transaction and released by its commit. SQLite: an exclusive flock on a file
beside the database, on top of the write lock BEGIN IMMEDIATE already takes (store.db.engine),
so the lock also covers what runs before the transaction (opening the file, the WAL switch).
"""

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

from agentrt.core.private import FILE_MODE
from agentrt.store.db.sealing import Sealer

# The scripts stay at store/migrations (alembic.ini's script_location too).
_MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_PG_LOCK = "SELECT pg_advisory_xact_lock(hashtext('agentrt.migrate:' || current_schema()))"


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    return cfg


def head() -> str:
    """The newest revision of the migration scripts."""
    found = ScriptDirectory.from_config(_config()).get_current_head()
    assert found is not None
    return found


def behind(engine: Engine) -> str | None:
    """Why the database's schema is older than these migration scripts' head, or None when
    it is at head or newer (a later release migrated it: its changes are additive, so an
    older worker of a rolling upgrade keeps running). Reads only; changes nothing."""
    scripts = ScriptDirectory.from_config(_config())
    with engine.connect() as conn:  # read as alembic keeps it (no MigrationContext: it logs)
        if not inspect(conn).has_table("alembic_version"):
            return "it has no agentrt schema"
        current = [r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version"))]
    if not current:
        return "it has no agentrt schema"
    known = {rev.revision for rev in scripts.walk_revisions()}
    if any(rev not in known for rev in current):
        return None  # a revision these scripts do not know: a newer release's
    head = scripts.get_current_head()
    if head in current:
        return None
    return f"its schema is at revision {', '.join(sorted(current))}, this release's is {head}"


@contextlib.contextmanager
def _file_lock(engine: Engine) -> Iterator[None]:
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield  # no file to share, so no other process to race
        return
    lock = Path(database).resolve().with_name(Path(database).name + ".migrate-lock")
    # Its owner's alone, like the database beside it (core/private.py).
    with os.fdopen(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # blocks until the other upgrade is done
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _serialized(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(text(_PG_LOCK))


def _run(
    engine: Engine,
    action: Callable[[Config, str], None],
    revision: str,
    sealer: Sealer | None,
) -> None:
    cfg = _config()
    with _file_lock(engine), engine.begin() as conn:
        _serialized(conn)
        cfg.attributes["connection"] = conn
        # A revision that seals or opens stored rows (0008) uses the store's own sealer;
        # without one it reads the key the settings name.
        cfg.attributes["sealer"] = sealer
        action(cfg, revision)


def upgrade(engine: Engine, revision: str = "head", sealer: Sealer | None = None) -> None:
    _run(engine, command.upgrade, revision, sealer)


def downgrade(engine: Engine, revision: str, sealer: Sealer | None = None) -> None:
    _run(engine, command.downgrade, revision, sealer)
