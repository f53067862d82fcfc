"""The benchmark's own database: a SQLite file in the work directory, or a fresh schema in
PostgreSQL that is dropped afterwards."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine


@contextmanager
def bench_database(work_dir: Path, postgres_dsn: str | None = None) -> Iterator[str]:
    """A fresh database with agentrt's schema at head, as `agentrt migrate` leaves it (a
    worker never creates or migrates one): a SQLite file in `work_dir`, or a schema of its
    own on `postgres_dsn`, dropped after."""
    if postgres_dsn is None:
        url = f"sqlite:///{work_dir / 'agentrt.db'}"
        _migrated(url)
        yield url
        return
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_dsn)
    try:
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        sep = "&" if "?" in postgres_dsn else "?"
        url = f"{postgres_dsn}{sep}options=-csearch_path%3D{schema}"
        _migrated(url)
        yield url
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def _migrated(url: str) -> None:
    engine = make_engine(url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()


def describe(url: str) -> str:
    return "PostgreSQL" if url.startswith("postgresql") else "SQLite (file)"
