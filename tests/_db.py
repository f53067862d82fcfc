"""A database of a test's own: a fresh PostgreSQL schema or a fresh SQLite file."""

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from agentrt.core.settings import DEFAULT_POSTGRES_DSN


def backend() -> str:
    return os.environ.get("AGENTRT_TEST_DATABASE", "sqlite")


@contextmanager
def scratch_database(prefix: str, sqlite_file: Path) -> Iterator[str]:
    """Yield the URL of an empty database, dropped afterwards (PostgreSQL: a schema)."""
    if backend() != "postgres":
        yield f"sqlite:///{sqlite_file}"
        return
    base = os.environ.get("AGENTRT_POSTGRES_DSN", DEFAULT_POSTGRES_DSN)
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def migrated(url: str) -> None:
    """The schema at head, as `agentrt migrate` makes it (workers only check it)."""
    from agentrt.store.db import migrate
    from agentrt.store.db.engine import make_engine

    engine = make_engine(url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
