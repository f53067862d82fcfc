"""A database of a test's own: a fresh PostgreSQL schema or a fresh SQLite file."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentrt.core.settings import DEFAULT_POSTGRES_DSN
from bench.database import fresh_schema, migrated

__all__ = ["backend", "migrated", "scratch_database"]


def backend() -> str:
    return os.environ.get("AGENTRT_TEST_DATABASE", "sqlite")


@contextmanager
def scratch_database(prefix: str, sqlite_file: Path) -> Iterator[str]:
    """Yield the URL of an empty database, dropped afterwards (PostgreSQL: a schema)."""
    if backend() != "postgres":
        yield f"sqlite:///{sqlite_file}"
        return
    with fresh_schema(os.environ.get("AGENTRT_POSTGRES_DSN", DEFAULT_POSTGRES_DSN), prefix) as url:
        yield url
