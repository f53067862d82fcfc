"""The hottest statements on the driver's cursor (store/db/driver.py): the same SQL and values
as through SQLAlchemy, errors typed as SQLAlchemy types them, a dropped connection never
handed out again, and every statement seen by whoever listens."""

import logging
import time

import pytest
from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    create_engine,
    insert,
    literal,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from agentrt.activities._common import is_store_unavailable
from agentrt.store.db import driver
from agentrt.store.db.context import utcnow
from agentrt.store.db.engine import make_engine
from agentrt.store.db.tables import EventRow, MessageRow, RunRow
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run


def _run(parts: WorkerResources) -> str:
    return begin_run(parts.ctx)


def test_a_statement_keeps_its_own_values_and_takes_the_callers(parts: WorkerResources) -> None:
    """A literal's value and a value set to NULL in the statement travel with it; the
    caller's params fill the rest (named on PostgreSQL, positional on SQLite)."""
    run_id = _run(parts)
    read = select(literal(7).label("seven"), RunRow.profile, RunRow.outcome).where(
        RunRow.id == bindparam("run_id")
    )
    assert driver.rows(parts.engine, read, {"run_id": run_id}) == [(7, "p", None)]
    set_outcome = (
        update(RunRow)
        .where(RunRow.id == bindparam("run_id"))
        .values(outcome="x", pending_state=None)
        .returning(RunRow.outcome)
    )
    assert driver.scalar(parts.engine, set_outcome, {"run_id": run_id}) == "x"
    with parts.ctx.reads() as s:  # committed (SQLite's driver had begun a transaction)
        assert s.scalar(select(RunRow.outcome).where(RunRow.id == run_id)) == "x"
    assert driver.rowcount(parts.engine, update(RunRow).where(RunRow.id == bindparam("run_id"))
                           .values(outcome="y"), {"run_id": run_id}) == 1  # fmt: skip
    assert driver.scalar(parts.engine, set_outcome, {"run_id": "no such run"}) is None


def test_an_in_over_the_statements_own_list_is_rendered_once(parts: WorkerResources) -> None:
    """`status IN (...)` over a constant list (the completion's guard): SQLAlchemy expands
    it at each execution; the driver renders it once. A list the caller passes is refused."""
    run_id = _run(parts)
    running = select(RunRow.id).where(
        RunRow.id == bindparam("run_id"), RunRow.status.in_(["RUNNING", "WAITING_FOR_INPUT"])
    )
    assert driver.rows(parts.engine, running, {"run_id": run_id}) == [(run_id,)]
    assert driver.rows(parts.engine, running, {"run_id": "no such run"}) == []
    theirs = select(RunRow.id).where(RunRow.id.in_(bindparam("ids", expanding=True)))
    with pytest.raises(ValueError, match="no IN list"):
        driver.rows(parts.engine, theirs, {"ids": [run_id]})


def test_a_refused_row_is_sqlalchemys_integrity_error(parts: WorkerResources) -> None:
    """A message for a run that does not exist: its foreign key refuses it, raised as
    SQLAlchemy raises it, and it is not a store outage (the step is not retried as one)."""
    orphan = insert(MessageRow).values(run_id=bindparam("run_id"), sequence=1, role="user",
                                       body="x")  # fmt: skip
    with pytest.raises(IntegrityError) as caught:
        driver.scalar(parts.engine, orphan, {"run_id": "no such run"})
    assert not is_store_unavailable(caught.value)


def test_listeners_see_each_statement_inside_their_block(parts: WorkerResources) -> None:
    run_id = _run(parts)
    seen: list[str] = []
    with driver.listen(parts.engine, seen.append):
        RunStore(parts.ctx).turn_inputs(run_id, 1)
    RunStore(parts.ctx).turn_inputs(run_id, 1)
    assert len(seen) == 1 and seen[0].lstrip().upper().startswith("SELECT")


@pytest.mark.skipif(backend() != "postgres", reason="a connection the server closed")
def test_a_connection_the_server_closed_is_an_outage_then_replaced(
    parts: WorkerResources, caplog: pytest.LogCaptureFixture
) -> None:
    """The pooled connection is killed by the server while it sits in the pool (back within
    the idle ping's second, so not pinged): the statement fails as an outage, typed as
    SQLAlchemy's, the connection is invalidated before it goes back (the pool does not try
    to reset a dead connection and log a traceback for it), and the next statement works on
    a new one."""
    engine = make_engine(parts.engine.url.render_as_string(hide_password=False))
    pid_of = select(literal(0).label("zero"), text("pg_backend_pid()"))
    try:
        (_, pid), = driver.rows(engine, pid_of, {})  # fmt: skip
        with parts.engine.connect() as c:
            c.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            c.commit()
            # The signal is sent; the backend is gone once the server no longer lists it
            # (a transaction per look: the statistics views are read once per transaction).
            alive = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
            deadline = time.monotonic() + 30
            while c.execute(alive, {"pid": pid}).scalar():
                c.commit()
                assert time.monotonic() < deadline, "the terminated backend never went"
                time.sleep(0.01)
            c.commit()
        with pytest.raises(OperationalError) as caught:
            driver.rows(engine, pid_of, {})
        assert caught.value.connection_invalidated
        assert is_store_unavailable(caught.value)
        logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert not logged, [r.getMessage() for r in logged]
        (_, again), = driver.rows(engine, pid_of, {})  # fmt: skip
        assert again != pid
    finally:
        engine.dispose()


@pytest.mark.skipif(backend() != "postgres", reason="a psycopg connection not in autocommit")
def test_a_write_on_an_engine_not_in_autocommit_is_committed(parts: WorkerResources) -> None:
    """An engine not built by make_engine: psycopg begins a transaction of its own, which the
    driver commits (the pool's reset on checkin would roll it back)."""
    run_id = _run(parts)
    plain = create_engine(parts.engine.url.render_as_string(hide_password=False))
    set_outcome = update(RunRow).where(RunRow.id == bindparam("run_id")).values(outcome="z")
    try:
        assert driver.rowcount(plain, set_outcome, {"run_id": run_id}) == 1
    finally:
        plain.dispose()
    with parts.ctx.reads() as s:
        assert s.scalar(select(RunRow.outcome).where(RunRow.id == run_id)) == "z"


def test_a_column_left_out_takes_its_python_default(parts: WorkerResources) -> None:
    """An insert that leaves out a column with a Python-side default (an event's `round`
    and `payload`): SQLAlchemy fills it at each execution, and so does the driver, where
    it would otherwise bind NULL."""
    run_id = _run(parts)
    add = insert(EventRow).values(run_id=bindparam("r"), sequence=bindparam("s"),
                                  kind=bindparam("k"), created_at=bindparam("at"))  # fmt: skip
    driver.scalar(parts.engine, add, {"r": run_id, "s": 99, "k": "llm", "at": utcnow()})
    with parts.ctx.reads() as s:
        got = s.execute(
            select(EventRow.round, EventRow.payload).where(
                EventRow.run_id == run_id, EventRow.sequence == 99
            )
        ).one()
    assert tuple(got) == (0, "{}")


def test_a_default_computed_per_row_is_refused(parts: WorkerResources) -> None:
    """A callable default would need computing at each execution: refused at compile time,
    before anything is sent (the table need not exist)."""
    probe = Table("driver_probe", MetaData(), Column("id", Integer, primary_key=True),
                  Column("at", String(8), default=lambda: "now"))  # fmt: skip
    seen: list[str] = []
    with driver.listen(parts.engine, seen.append), pytest.raises(ValueError, match="computed"):
        driver.scalar(parts.engine, insert(probe).values(id=bindparam("i")), {"i": 1})
    assert seen == []


def _outcome(parts: WorkerResources, run_id: str) -> str | None:
    with parts.ctx.reads() as s:
        return s.scalar(select(RunRow.outcome).where(RunRow.id == run_id))


@pytest.mark.skipif(backend() == "postgres", reason="SQLite's write transactions")
def test_a_transaction_commits_its_statements_together_or_none(parts: WorkerResources) -> None:
    """SQLite's step writes (store/steps/write.py): BEGIN IMMEDIATE, the statements, COMMIT
    on one pooled connection; an exception in the block, or a row the database refuses,
    rolls back every statement of it, and the pool's connection serves the next call."""
    run_id = _run(parts)
    set_outcome = (update(RunRow).where(RunRow.id == bindparam("run_id"))
                   .values(outcome=bindparam("o")))  # fmt: skip
    seen: list[str] = []
    with driver.listen(parts.engine, seen.append), driver.transaction(parts.engine) as cursor:
        assert cursor.rowcount(set_outcome, {"run_id": run_id, "o": "a"}) == 1
    assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT" and len(seen) == 3
    assert _outcome(parts, run_id) == "a"

    class Died(Exception):
        pass

    with pytest.raises(Died), driver.transaction(parts.engine) as cursor:
        cursor.rowcount(set_outcome, {"run_id": run_id, "o": "b"})
        raise Died
    assert _outcome(parts, run_id) == "a"
    orphan = insert(MessageRow).values(run_id=bindparam("run_id"), sequence=1, role="user",
                                       body="x")  # fmt: skip
    with pytest.raises(IntegrityError), driver.transaction(parts.engine) as cursor:
        cursor.rowcount(set_outcome, {"run_id": run_id, "o": "c"})
        cursor.scalar(orphan, {"run_id": "no such run"})
    assert _outcome(parts, run_id) == "a"
    assert driver.rowcount(parts.engine, set_outcome, {"run_id": run_id, "o": "d"}) == 1
    assert _outcome(parts, run_id) == "d"


@pytest.mark.skipif(backend() != "postgres", reason="PostgreSQL's writes are one statement")
def test_a_transaction_on_postgresql_is_refused(parts: WorkerResources) -> None:
    with pytest.raises(ValueError, match="SQLite"), driver.transaction(parts.engine):
        pass


def test_a_joined_cursor_is_in_the_connections_transaction(parts: WorkerResources) -> None:
    """`Cursor.joining` a SQLAlchemy Connection (the completion's full way, whose hooks
    need a Session): its statements commit and roll back with that Connection's
    transaction, and the Connection's pooled connection stays its owner's."""
    run_id = _run(parts)
    set_outcome = (update(RunRow).where(RunRow.id == bindparam("run_id"))
                   .values(outcome=bindparam("o")))  # fmt: skip
    outcome = select(RunRow.outcome).where(RunRow.id == bindparam("run_id"))

    class Died(Exception):
        pass

    with pytest.raises(Died), parts.ctx.transaction() as c, driver.Cursor.joining(c) as cursor:
        assert cursor.rowcount(set_outcome, {"run_id": run_id, "o": "j"}) == 1
        raise Died
    assert _outcome(parts, run_id) is None
    with parts.ctx.transaction() as c:
        with driver.Cursor.joining(c) as cursor:
            cursor.rowcount(set_outcome, {"run_id": run_id, "o": "k"})
            assert cursor.first(outcome, {"run_id": run_id}) == ("k",)
        # The Connection itself sees the cursor's write: one transaction.
        assert c.execute(select(RunRow.outcome).where(RunRow.id == run_id)).scalar() == "k"
    assert _outcome(parts, run_id) == "k"


def test_a_value_is_sent_as_sqlalchemy_sends_it(parts: WorkerResources) -> None:
    """A datetime goes through its type's bind processor: on SQLite stored as the same text
    SQLAlchemy writes (the sqlite3 module's own adapter writes another, `+00:00` and all,
    which every comparison with SQLAlchemy's would then mix), on PostgreSQL as psycopg
    sends it. The same event row written both ways reads back the same, as stored."""
    run_id = _run(parts)
    at = utcnow()
    add = insert(EventRow).values(run_id=bindparam("r"), sequence=bindparam("s"),
                                  kind=bindparam("k"), created_at=bindparam("at"))  # fmt: skip
    driver.scalar(parts.engine, add, {"r": run_id, "s": 98, "k": "llm", "at": at})
    with parts.ctx.transaction() as c:
        c.execute(add, {"r": run_id, "s": 99, "k": "llm", "at": at})
    stored = text("SELECT CAST(created_at AS VARCHAR(64)) FROM agent_event "
                  "WHERE run_id = :r AND sequence IN (98, 99) ORDER BY sequence")  # fmt: skip
    with parts.engine.connect() as c:
        by_driver, by_sqlalchemy = c.execute(stored, {"r": run_id}).scalars().all()
    assert by_driver == by_sqlalchemy
