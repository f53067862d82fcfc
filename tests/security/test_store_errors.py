"""A store call that the database cannot serve (a model call's transcript read) crosses
into Temporal as the text-free StoreUnavailable: no SQL, no host, no stored content, no
driver message, no chained cause, and a one-line log that names only the error's type."""

import logging
from pathlib import Path

import pytest
from sqlalchemy import text
from temporalio.exceptions import ApplicationError

from agentrt.activities._common import db
from agentrt.contracts.errors import ErrorType
from agentrt.store.db.context import StoreContext
from agentrt.store.db.engine import make_engine, make_sessionmaker
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run

CANARY = "canary-prompt-7d1f"


async def test_a_store_failure_says_nothing_but_unavailable(
    parts: WorkerResources, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run_id = begin_run(parts.ctx, prompt=CANARY)
    if backend() == "postgres":  # its pooled connection killed by the server
        url = parts.engine.url.render_as_string(hide_password=False)
        engine = make_engine(url)
        with engine.connect() as c:
            pid = c.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with parts.engine.connect() as c:
            c.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            c.commit()
    else:  # a database file with no schema: SQLite's OperationalError names the table
        engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    ctx = StoreContext(sessions=make_sessionmaker(engine), sealer=parts.ctx.sealer)
    try:
        with pytest.raises(ApplicationError) as caught:
            await db(RunStore(ctx).turn_inputs, run_id, 1)
    finally:
        engine.dispose()
    err = caught.value
    assert err.type == ErrorType.STORE_UNAVAILABLE.value
    shown = f"{err} {err.message} {err.details}"
    for secret in ("SELECT", "agent_run", "127.0.0.1", "5432", run_id, CANARY, "psycopg",
                   "sqlite3"):  # fmt: skip
        assert secret not in shown
    assert err.__cause__ is None and err.__suppress_context__
    lines = [r.getMessage() for r in caplog.records if "store unavailable" in r.getMessage()]
    assert lines == ["store unavailable: OperationalError"], lines
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
