"""A step's rows, written as one: all or none, duplicates ignored, and one statement in
autocommit (no BEGIN, no COMMIT): on PostgreSQL data-modifying CTEs, on SQLite an INSERT
into the view of migration 0021."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import IntegrityError

from agentrt.activities.fence._sql import clear_part
from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import Message
from agentrt.store.db.engine import in_autocommit
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import EventRow, MessageRow
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.events import event_row
from agentrt.store.steps.sqlite_view import SQLITE_STEP_VIEW, SQLITE_VIEW_COLUMNS
from agentrt.store.steps.write import Part, write_step, write_steps
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run
from tests._snapshots import recorded
from tests.conftest import TEST_SEAL_KEYS


def _run(parts: WorkerResources) -> str:
    return begin_run(parts.ctx, snapshot=recorded("full"))


def _count(parts: WorkerResources, table: Any, run_id: str) -> int:
    with parts.ctx.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(table).where(table.run_id == run_id)))


@contextmanager
def _statements(parts: WorkerResources) -> Iterator[list[str]]:
    """Every SQL text the engine sends, BEGIN and COMMIT included where they are sent."""
    sent: list[str] = []

    def on_execute(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
        sent.append(statement.split(None, 1)[0].upper())

    # A transaction's BEGIN is a statement both engines send (store/db/engine.py): it is in
    # `sent` from on_execute.
    def on_commit(conn: Any) -> None:
        if not in_autocommit(conn):
            sent.append("COMMIT")

    engine = parts.engine
    event.listen(engine, "before_cursor_execute", on_execute)
    event.listen(engine, "commit", on_commit)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", on_execute)
        event.remove(engine, "commit", on_commit)


def _message(run_id: str, seq: int, parts: WorkerResources) -> Part:
    msg = Message(role="assistant", content=f"m{seq}")
    return Part("message", RunStore(parts.ctx).message_row(run_id, seq, msg))


def _event(run_id: str, seq: int) -> Part:
    sealer = Sealer.from_b64(TEST_SEAL_KEYS)  # the suite's key, as the parts' store has
    return Part("event", event_row(sealer, run_id, seq, EventKind.LLM, 1, {"content": "x"}, "full"))


def test_a_step_lands_whole_and_a_repeat_adds_nothing(parts: WorkerResources) -> None:
    run_id = _run(parts)
    step = [_message(run_id, 1, parts), _event(run_id, 1)]
    assert write_step(parts.ctx, step) is True
    assert write_step(parts.ctx, step) is False  # the first part's row was there
    assert _count(parts, MessageRow, run_id) == 2  # the user's message and this one
    assert _count(parts, EventRow, run_id) == 2


def test_a_failing_part_leaves_none_of_the_step(parts: WorkerResources) -> None:
    """The event names a run that does not exist (its foreign key fails): the message of
    the same step, written first, must not land either."""
    run_id = _run(parts)
    ghost = str(uuid.uuid4())
    with pytest.raises(IntegrityError):
        write_step(parts.ctx, [_message(run_id, 1, parts), _event(ghost, 1)])
    assert _count(parts, MessageRow, run_id) == 1  # the user's message only
    assert _count(parts, EventRow, ghost) == 0


def test_a_fault_before_a_part_commits_nothing(parts: WorkerResources) -> None:
    run_id = _run(parts)
    points: list[str] = []

    class Died(Exception):
        pass

    def die(point: str) -> None:
        points.append(point)
        raise Died

    ctx = parts.ctx.__class__(
        parts.ctx.sessions,
        parts.ctx.sealer,
        die,
        read_sessions=parts.ctx.read_sessions,
        statement_sessions=parts.ctx.statement_sessions,
    )
    clear = clear_part(run_id, "t", fault="p.clear")
    with pytest.raises(Died):
        write_step(ctx, [_message(run_id, 1, parts), _event(run_id, 1), clear])
    assert points == ["p.clear"]
    assert _count(parts, MessageRow, run_id) == 1


def test_each_kind_of_row_once_per_step(parts: WorkerResources) -> None:
    if backend() != "postgres":
        pytest.skip("SQLite writes parts the view does not carry one by one")
    run_id = _run(parts)
    with pytest.raises(ValueError):
        write_step(parts.ctx, [_message(run_id, 1, parts), _message(run_id, 2, parts)])


def test_a_step_is_one_statement_and_no_transaction(parts: WorkerResources) -> None:
    with _statements(parts) as began:  # the begin: the run, its prompt, run_started
        run_id = _run(parts)
    assert began == (["WITH"] if backend() == "postgres" else ["INSERT"])
    with _statements(parts) as sent:
        assert write_step(parts.ctx, [_message(run_id, 1, parts), _event(run_id, 1)]) is True
    assert sent == (["WITH"] if backend() == "postgres" else ["INSERT"])
    assert _count(parts, MessageRow, run_id) == 2
    assert _count(parts, EventRow, run_id) == 2


def test_parts_the_view_does_not_carry_still_land_whole(parts: WorkerResources) -> None:
    """SQLite: a part whose columns are not the view's (here an event without its duration)
    takes the old way, one statement each in one transaction, all or none as ever."""
    run_id = _run(parts)
    short = _event(run_id, 1)
    short = Part("event", {k: v for k, v in short.params.items() if k != "duration_ms"})
    with _statements(parts) as sent:
        assert write_step(parts.ctx, [_message(run_id, 1, parts), short]) is True
    if backend() != "postgres":
        assert sent == ["BEGIN", "INSERT", "INSERT", "COMMIT"]
    assert _count(parts, EventRow, run_id) == 2


def test_the_stores_view_columns_are_the_migrations(parts: WorkerResources) -> None:
    """SQLite: the columns the store binds into the view (`SQLITE_VIEW_COLUMNS`, kept beside the
    code that builds the parts) are exactly those migration 0021 made, part by part: a
    column one side lacks would fail every step, or leave one the view never writes."""
    if backend() == "postgres":
        pytest.skip("the view is SQLite's (PostgreSQL writes a step as CTEs)")
    with parts.engine.connect() as c:
        made = {row[1] for row in c.exec_driver_sql(f"PRAGMA table_info({SQLITE_STEP_VIEW})")}
    bound = {f"{kind}_{name}" for kind, names in SQLITE_VIEW_COLUMNS.items() for name in names}
    assert made and made == bound


def test_steps_of_one_shape_run_one_compiled_statement(parts: WorkerResources) -> None:
    """SQLite: steps of the same shape, one row or several, execute the one compiled
    statement from SQLAlchemy's cache. Built as a multi-row VALUES insert it has no cache
    key, and was compiled again at every step (about half of a turn record's CPU)."""
    if backend() == "postgres":
        pytest.skip("the view is SQLite's (PostgreSQL's CTE statement has its cache key)")
    run_id = _run(parts)
    before = _count(parts, MessageRow, run_id)
    seen: list[Any] = []

    def on_execute(_c: Any, _cur: Any, statement: str, _p: Any, context: Any, _m: Any) -> None:
        if statement.startswith(f"INSERT INTO {SQLITE_STEP_VIEW}"):
            seen.append(context.compiled)

    event.listen(parts.engine, "before_cursor_execute", on_execute)
    try:
        for seq in (1, 3):
            assert write_step(parts.ctx, [_message(run_id, seq, parts), _event(run_id, seq)])
        for seq in (5, 7):
            both = [[_message(run_id, seq, parts)], [_message(run_id, seq + 1, parts)]]
            write_steps(parts.ctx, both)
    finally:
        event.remove(parts.engine, "before_cursor_execute", on_execute)
    assert len(seen) == 4
    assert seen[0] is seen[1] and seen[2] is seen[3] and seen[0] is not seen[2]
    assert _count(parts, MessageRow, run_id) == before + 6
