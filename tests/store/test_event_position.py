"""An event's `position` (migration 0018) is its place in commit order, given as its
transaction commits: a follower paging by it sees every event once, whatever order the
sequences were reserved and written in. A retried step takes no position; the lock behind
it is taken last and so joins no deadlock; the migration backfills and reverts."""

import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import inspect, text, update
from sqlalchemy.orm import Session

from agentrt.contracts.enums import EventKind
from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.events import event_row, insert_event
from agentrt.workers.compose import WorkerResources
from tests._db import backend, scratch_database
from tests._late_events import begin, settle, tool_step

POSTGRES_ONLY = pytest.mark.skipif(
    backend() != "postgres", reason="two write transactions at once: SQLite has one writer"
)


def _order(runs: RunStore, run_id: str) -> list[tuple[int, int]]:
    return [(e.position, e.sequence) for e in runs.events(run_id)]


def test_positions_follow_commit_order_not_sequence(parts: WorkerResources) -> None:
    runs = RunStore(parts.ctx)
    run_id = begin(parts.ctx, "t")
    tool_step(parts.ctx, run_id, 2)
    # A follower that has read through sequence 2's event resumes after its position.
    seen = runs.events(run_id)[-1].position
    tool_step(parts.ctx, run_id, 1)  # committed late, lower sequence
    settle(parts.ctx, run_id, 3)
    assert _order(runs, run_id) == [(0, 0), (1, 2), (2, 1), (3, 3)]
    assert [e.sequence for e in runs.events(run_id, seen)] == [1, 3]


def test_a_retried_step_adds_no_row_and_takes_no_position(parts: WorkerResources) -> None:
    runs = RunStore(parts.ctx)
    run_id = begin(parts.ctx, "t")
    tool_step(parts.ctx, run_id, 1)
    tool_step(parts.ctx, run_id, 1)  # the activity retried after its commit
    tool_step(parts.ctx, run_id, 2)
    assert _order(runs, run_id) == [(0, 0), (1, 1), (2, 2)]  # gapless


@POSTGRES_ONLY
def test_a_step_written_first_but_committed_last_comes_last(parts: WorkerResources) -> None:
    """Two parallel calls' steps: 1 inserts first and commits last. Its position is given at
    its commit, after 2's: a follower that read 2 finds 1 after it."""
    runs = RunStore(parts.ctx)
    run_id = begin(parts.ctx, "t")
    with parts.ctx.sessions.begin() as s:
        _write_event(parts, s, run_id, 1)
        tool_step(parts.ctx, run_id, 2)  # another connection: commits while 1 is open
        assert _order(runs, run_id) == [(0, 0), (1, 2)]
    assert _order(runs, run_id) == [(0, 0), (1, 2), (2, 1)]


@POSTGRES_ONLY
def test_events_of_one_transaction_are_numbered_in_sequence_order(
    parts: WorkerResources,
) -> None:
    """A turn's `llm` event and `run_completed`, written in one statement in no set order,
    read in the order of their sequences."""
    run_id = begin(parts.ctx, "t")
    with parts.ctx.sessions.begin() as s:
        _write_event(parts, s, run_id, 2)
        _write_event(parts, s, run_id, 1)
    assert _order(RunStore(parts.ctx), run_id) == [(0, 0), (1, 1), (2, 2)]


@POSTGRES_ONLY
def test_the_position_lock_joins_no_deadlock(parts: WorkerResources) -> None:
    """A transaction that writes an event, then a guarded update of the run row (a
    completion's order), against one that updates the row, then writes an event (a
    settle's): were the position's lock taken at the insert, each would hold what the other
    waits for. Taken at commit, the second commits and the first follows."""
    run_id = begin(parts.ctx, "t")
    row_locked = threading.Event()
    errors: list[BaseException] = []

    def settle_shape() -> None:
        try:
            with parts.ctx.sessions.begin() as s:
                s.execute(update(RunRow).where(RunRow.id == run_id).values(iterations=1))
                row_locked.set()
                _write_event(parts, s, run_id, 2)
                _until_waiting_on_the_row(parts)
        except BaseException as exc:
            errors.append(exc)

    with parts.ctx.sessions.begin() as s:
        _write_event(parts, s, run_id, 1)
        other = threading.Thread(target=settle_shape)
        other.start()
        assert row_locked.wait(30)
        # The row is the other's: this waits until it commits (a deadlock would raise).
        s.execute(update(RunRow).where(RunRow.id == run_id).values(iterations=2))
    other.join(30)
    assert not errors, errors
    assert _order(RunStore(parts.ctx), run_id) == [(0, 0), (1, 2), (2, 1)]


def test_the_migration_backfills_and_reverts(tmp_path: Path) -> None:
    with scratch_database("pos", tmp_path / "pos.db") as url:
        engine = make_engine(url)
        try:
            migrate.upgrade(engine, "0017")
            run_id = str(uuid.uuid4())
            with engine.begin() as c:
                c.execute(text(
                    "INSERT INTO agent_run (id, profile, status, iterations, truncated, "
                    "prompt_tokens, completion_tokens, snapshot, initiator, created_at, "
                    "updated_at, revision) VALUES (:r, 'p', 'RUNNING', 0, false, 0, 0, '{}', "
                    "'t', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0)"
                ), {"r": run_id})  # fmt: skip
                for seq in (0, 1, 3):  # 2 still in flight across the upgrade
                    c.execute(_EVENT, {"r": run_id, "s": seq})
            migrate.upgrade(engine)
            with engine.begin() as c:
                c.execute(_EVENT, {"r": run_id, "s": 2})
            with engine.connect() as c:
                got = c.execute(text(
                    "SELECT position, sequence FROM agent_event WHERE run_id = :r "
                    "ORDER BY position"
                ), {"r": run_id}).all()  # fmt: skip
            assert [tuple(r) for r in got] == [(0, 0), (1, 1), (3, 3), (4, 2)]
            migrate.downgrade(engine, "0017")
            columns = {c["name"] for c in inspect(engine).get_columns("agent_event")}
            assert "position" not in columns
            with engine.begin() as c:
                c.execute(_EVENT, {"r": run_id, "s": 4})  # no trigger left behind
            migrate.upgrade(engine)
            with engine.connect() as c:
                last = c.execute(text(
                    "SELECT position FROM agent_event WHERE run_id = :r AND sequence = 4"
                ), {"r": run_id}).scalar()  # fmt: skip
            assert last == 4  # backfilled again from its sequence
        finally:
            engine.dispose()


def _write_event(parts: WorkerResources, s: Session, run_id: str, sequence: int) -> None:
    """A `tool` event inserted in the caller's open transaction (uncommitted)."""
    row = event_row(parts.ctx.sealer, run_id, sequence, EventKind.TOOL, 1, {}, "full")
    insert_event(s, row)


def _until_waiting_on_the_row(parts: WorkerResources, within: float = 30.0) -> None:
    """Until another session waits for a lock in its UPDATE of the run row's iterations."""
    deadline = time.monotonic() + within
    with parts.ctx.engine.connect() as c:
        while c.execute(_WAITING).scalar() == 0:
            # pg_stat_activity is read once per transaction: a poll inside the first one
            # would see the first look's snapshot for ever (a loaded machine's first look
            # comes before the other session waits). Each look is a transaction of its own.
            c.rollback()
            assert time.monotonic() < deadline, "the other transaction never waited"
            time.sleep(0.02)


_WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND query LIKE 'UPDATE agent_run SET iterations%'"
)
_EVENT = text(
    "INSERT INTO agent_event (run_id, sequence, kind, round, payload, created_at) "
    "VALUES (:r, :s, 'tool', 1, '{}', CURRENT_TIMESTAMP)"
)
