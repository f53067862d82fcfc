"""Each shipped revision runs the SQL it ran when it shipped, up and down, to the byte, on
the suite's backend: a refactor of the migrations (store/migrations/_ddl.py) may change how
they are written, never the schema they make. The snapshot: tests/store/ddl/<dialect>.txt."""

from pathlib import Path

from tests.store.ddl_snapshot import SNAPSHOTS, dialect, fresh_sql


def test_every_revision_runs_the_sql_of_its_snapshot(tmp_path: Path) -> None:
    snapshot = (SNAPSHOTS / f"{dialect()}.txt").read_text()
    fresh = fresh_sql(tmp_path)
    assert "-- upgrade to 0001" in fresh and "CREATE TABLE agent_run" in fresh
    assert "-- downgrade to base" in fresh and "DROP TABLE agent_run" in fresh
    assert fresh == snapshot, "a revision's SQL changed: see tests/store/ddl_snapshot.py"
