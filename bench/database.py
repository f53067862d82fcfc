"""The benchmark's own database: a SQLite file in the work directory, or a fresh schema in
PostgreSQL that is dropped afterwards; and the runs a round begins in it."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from agentrt.contracts.snapshot import SnapshotRecord
from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
from agentrt.store.runs.record import NewRun, RunStore


@contextmanager
def bench_database(work_dir: Path, postgres_dsn: str | None = None) -> Iterator[str]:
    """A fresh database with agentrt's schema at head, as `agentrt migrate` leaves it (a
    worker never creates or migrates one): a SQLite file in `work_dir`, or a schema of its
    own on `postgres_dsn`, dropped after."""
    if postgres_dsn is None:
        url = f"sqlite:///{work_dir / 'agentrt.db'}"
        migrated(url)
        yield url
        return
    with fresh_schema(postgres_dsn, "bench") as url:
        migrated(url)
        yield url


@contextmanager
def fresh_schema(postgres_dsn: str, prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL schema named from `prefix`, dropped afterwards
    (the tests' own databases too: tests/_db.py)."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_dsn)
    try:
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        sep = "&" if "?" in postgres_dsn else "?"
        yield f"{postgres_dsn}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def migrated(url: str) -> None:
    """The schema at head, as `agentrt migrate` makes it (workers only check it)."""
    engine = make_engine(url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()


def describe(url: str) -> str:
    return "PostgreSQL" if url.startswith("postgresql") else "SQLite (file)"


def begin_runs(runs: RunStore, count: int, snapshot: SnapshotRecord) -> list[str]:
    """`count` new RUNNING runs on the profile "p" (untimed set-up for a round): their ids."""
    ids = [str(uuid.uuid4()) for _ in range(count)]
    for run_id in ids:
        runs.begin(NewRun(run_id=run_id, profile="p", snapshot=snapshot, prompt="hi",
                          initiator="t", privacy="full"))  # fmt: skip
    return ids
