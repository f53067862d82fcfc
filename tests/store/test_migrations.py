"""Every revision upgrades and downgrades cleanly, on the suite's backend."""

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from core.settings import DEFAULT_POSTGRES_DSN
from store import migrate
from store.engine import make_engine


@pytest.fixture
def empty_url(tmp_path: Path) -> Iterator[str]:
    if os.environ.get("AGENTRT_TEST_DATABASE") == "postgres":
        base = os.environ.get("AGENTRT_POSTGRES_DSN", DEFAULT_POSTGRES_DSN)
        schema = f"m_{uuid.uuid4().hex[:12]}"
        admin = create_engine(base)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield f"{base}?options=-csearch_path%3D{schema}"
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
    else:
        yield f"sqlite:///{tmp_path / 'm.db'}"


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
