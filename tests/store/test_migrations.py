"""Every revision upgrades and downgrades cleanly, on the suite's backend."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from agentrt.store import migrate
from agentrt.store.engine import make_engine
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
