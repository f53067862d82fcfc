"""Each shipped revision runs the SQL it ran when it shipped, up and down, to the byte, on
the suite's backend: a refactor of the migrations (store/migrations/_ddl.py) may change how
they are written, never the schema they make. The snapshot: tests/store/ddl/<dialect>.txt;
`python -m tests.store.test_migration_ddl` re-makes the backend's after a new revision."""

import tempfile
from pathlib import Path

from tests._db import backend, scratch_database
from tests.store.ddl_snapshot import SNAPSHOTS, revisions_sql


def _snapshot() -> Path:
    return SNAPSHOTS / f"{'postgresql' if backend() == 'postgres' else 'sqlite'}.txt"


def _fresh_sql(tmp: Path) -> str:
    """The revisions' SQL on a new, empty database of the suite's backend."""
    with scratch_database("ddl", tmp / "ddl.db") as url:
        return revisions_sql(url)


def test_every_revision_runs_the_sql_of_its_snapshot(tmp_path: Path) -> None:
    fresh = _fresh_sql(tmp_path)
    assert "-- upgrade to 0001" in fresh and "CREATE TABLE agent_run" in fresh
    assert "-- downgrade to base" in fresh and "DROP TABLE agent_run" in fresh
    assert fresh == _snapshot().read_text(), "a revision's SQL changed: see ddl_snapshot.py"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        _snapshot().write_text(_fresh_sql(Path(work)))
