"""Every revision upgrades and downgrades cleanly, on the suite's backend."""

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
from tests._db import scratch_database


@pytest.fixture
def empty_url(tmp_path: Path) -> Iterator[str]:
    with scratch_database("m", tmp_path / "m.db") as url:
        yield url


def test_upgrade_downgrade_upgrade(empty_url: str) -> None:
    engine = make_engine(empty_url)
    try:
        migrate.upgrade(engine)
        tables = set(inspect(engine).get_table_names())
        assert {"agent_run", "agent_event", "agent_message", "tool_result", "demo_ledger"} <= tables
        columns = {c["name"] for c in inspect(engine).get_columns("agent_run")}
        assert {"pending_approval", "waiting_since", "pending_token"} <= columns
        migrate.downgrade(engine, "0001")
        columns = {c["name"] for c in inspect(engine).get_columns("agent_run")}
        assert "pending_approval" not in columns
        migrate.downgrade(engine, "base")
        assert "agent_run" not in set(inspect(engine).get_table_names())
        migrate.upgrade(engine)
        with engine.connect() as conn:
            seeded = conn.execute(text("SELECT count(*) FROM demo_record")).scalar()
        assert seeded == 3
    finally:
        engine.dispose()


_UPGRADE = """
import sys, time
from pathlib import Path
from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
url, go, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
engine = make_engine(url)
ready.touch()  # imported everything: spinning from here
while not go.exists():  # both processes start the upgrade at the same instant
    time.sleep(0.001)
migrate.upgrade(engine)
engine.dispose()
"""


@pytest.mark.timeout(180)
@pytest.mark.parametrize("attempt", range(3))
def test_two_processes_upgrading_a_fresh_database_at_once_both_succeed(
    tmp_path: Path, attempt: int
) -> None:
    """docker-compose starts the worker and the API together on an empty database: both
    run the migrations. Each attempt is a fresh database and a fresh pair of processes."""
    with scratch_database("mc", tmp_path / "race.db") as url:
        go = tmp_path / "go"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _UPGRADE, url, str(go), str(tmp_path / f"ready-{n}")],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(2)
        ]
        # Both interpreters have imported everything and are spinning.
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready-{n}").exists() for n in range(2)):
            assert all(p.poll() is None for p in procs), "an upgrade process exited early"
            assert time.monotonic() < deadline, "the upgrade processes never got ready"
            time.sleep(0.01)
        go.touch()
        results = [p.communicate(timeout=120) for p in procs]
        for proc, (_out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err[-2000:]
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                version = conn.execute(text("SELECT version_num FROM alembic_version")).all()
                seeded = conn.execute(text("SELECT count(*) FROM demo_record")).scalar()
        finally:
            engine.dispose()
        assert [v for (v,) in version] == [migrate.head()]
        assert seeded == 3  # the seed ran once
