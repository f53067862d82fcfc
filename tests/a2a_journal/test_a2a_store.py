"""The A2A task view and journal on the real database: the completion hook, projection
idempotent per revision, the answer ceiling, listing, purge and sealing."""

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, select, text, update
from sqlalchemy.orm import Session
from temporalio.exceptions import ApplicationError

from agentrt.activities.a2a import project
from agentrt.activities.settle.completion import Completion
from agentrt.contracts.a2a import ProjectRequest
from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Message, Usage
from agentrt.contracts.run import CompleteRequest, TurnRecord
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.purge import purge_runs, purge_terminal_before
from agentrt.store.a2a.push import A2APushStore
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.db.a2a_tables import A2AEventRow, A2ATaskRow
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer, SealError
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.store.security.rotate import rotate
from agentrt.workers.compose import WorkerResources
from tests._db import backend, scratch_database
from tests._runs import begin_run
from tests._settle import settle_failed
from tests._snapshots import recorded


def _message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def _task(
    parts: WorkerResources, level: str = "full", owner: str = "alice", ctx_id: str = ""
) -> tuple:
    store = A2AStore(parts.ctx)
    task_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
    store.create(
        task_id=task_id,
        context_id=ctx_id or str(uuid.uuid4()),
        workflow_id=run_id,
        owner=owner,
        profile="p",
        answer_level=level,
        message=_message("hello, my mail is a@b.io"),
    )
    snapshot = recorded("full", answer_level=level)
    begin_run(parts.ctx, run_id, snapshot=snapshot, prompt="hello", initiator=owner)
    return task_id, run_id


def _answer_and_complete(parts: WorkerResources, run_id: str, text: str) -> None:
    RunStore(parts.ctx).record_turn(
        run_id, TurnRecord(1, 1, Message(role="assistant", content=text), {}, 1.0, "full")
    )
    Completion(parts.ctx).complete(CompleteRequest(
        run_id=run_id,
        sequence=2,
        answer_sequence=1,
        iterations=1,
        truncated=False,
        termination_reason=TerminationReason.ANSWERED,
        usage=Usage(),
        privacy="full",
    ))  # fmt: skip


def test_projection_is_idempotent_per_revision_and_completion_stores_the_result(
    parts: WorkerResources,
) -> None:
    task_id, run_id = _task(parts)
    journal = A2AJournal(parts.ctx)
    req = ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full")
    first = project(parts.ctx, req)
    assert first.events_written == 1
    assert project(parts.ctx, req).events_written == 0
    _answer_and_complete(parts, run_id, "The answer, mail me at bob@example.com")
    task = A2AStore(parts.ctx).get(task_id, "alice")
    assert task is not None and task.state == "TASK_STATE_COMPLETED"
    assert task.artifacts[0]["parts"][0]["text"].startswith("The answer")
    done = project(parts.ctx, req)
    assert done.events_written == 2  # the artifact, then the status
    assert project(parts.ctx, req).events_written == 0
    events = journal.events_after(task_id, -1)
    assert [e.state for e in events] == [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_COMPLETED",
    ]
    assert [e.kind for e in events][-2:] == ["artifact", "status"]
    assert [e.sequence for e in events] == [0, 1, 2, 3]
    snap = journal.snapshot(task_id, 3)
    assert snap is not None and snap[1] == "TASK_STATE_COMPLETED"
    assert snap[0]["artifacts"][0]["parts"][0]["text"].startswith("The answer")
    # History: the client's message, then the agent's final status message.
    assert [m["role"] for m in task.history] == ["ROLE_USER", "ROLE_AGENT"]


def test_redacted_level_keeps_redacted_text_everywhere(parts: WorkerResources) -> None:
    task_id, run_id = _task(parts, level="redacted")
    _answer_and_complete(parts, run_id, "Write to bob@example.com")
    task = A2AStore(parts.ctx).get(task_id, None)
    assert task is not None
    assert task.artifacts[0]["parts"][0]["text"] == "Write to ***"
    assert "a@b.io" not in json.dumps(task.history)


@pytest.mark.parametrize("level", ["metadata", "none"])
def test_a_ceiling_that_keeps_no_result_refuses_the_completion(
    parts: WorkerResources, level: str
) -> None:
    task_id, run_id = _task(parts, level="full")
    # The ceiling tightens during the run (as a fallback to a stricter provider would).
    with parts.ctx.sessions.begin() as s:
        s.execute(
            update(RunRow)
            .where(RunRow.id == run_id)
            .values(snapshot=json.dumps({"plan": {"answer_level": level}}))
        )
    with pytest.raises(ApplicationError) as refused:  # the store's ResultNotRetainableError
        _answer_and_complete(parts, run_id, "secret answer")
    assert refused.value.type == ErrorType.RESULT_NOT_RETAINABLE.value
    assert RunStore(parts.ctx).status(run_id) is RunStatus.RUNNING  # rolled back whole
    task = A2AStore(parts.ctx).get(task_id, None)
    assert task is not None and task.artifacts == [] and task.state == "TASK_STATE_SUBMITTED"
    settle_failed(
        parts.ctx,
        run_id,
        sequence=3,
        reason=TerminationReason.RESULT_NOT_RETAINABLE,
        iterations=1,
        error_type="ResultNotRetainable",
    )
    project(parts.ctx, ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full"))
    task = A2AStore(parts.ctx).get(task_id, None)
    assert task is not None and task.state == "TASK_STATE_FAILED"
    assert task.metadata == {"reason": "RESULT_NOT_RETAINABLE"}
    assert task.status_message is not None
    assert "privacy policy" in task.status_message["parts"][0]["text"]
    assert "secret answer" not in json.dumps(task.history)


def test_listing_is_owner_scoped_newest_first_with_cursor_paging(parts: WorkerResources) -> None:
    owner = f"lister-{uuid.uuid4().hex[:6]}"
    ids = [_task(parts, owner=owner)[0] for _ in range(5)]
    _task(parts, owner="someone-else")
    store = A2AStore(parts.ctx)
    seen: list[str] = []
    token = ""
    while True:
        page = store.page(owner=owner, page_size=2, token=token)
        assert page.total == 5
        seen += [t.id for t in page.tasks]
        token = page.next_token
        if not token:
            break
    assert seen == list(reversed(ids))
    since = store.page(owner=owner, since=utcnow() + timedelta(days=1))
    assert since.total == 0 and since.tasks == [] and since.next_token == ""


def test_purging_a_run_removes_its_task_and_journal(parts: WorkerResources) -> None:
    task_id, run_id = _task(parts)
    project(parts.ctx, ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full"))
    _answer_and_complete(parts, run_id, "done")
    assert purge_runs(parts.ctx, [run_id]) == 1
    assert A2AStore(parts.ctx).get(task_id, None) is None
    with parts.ctx.sessions() as s:
        assert s.scalar(select(A2AEventRow).where(A2AEventRow.task_id == task_id)) is None
    # By age: only terminal runs older than the cutoff.
    old_task, old_run = _task(parts)
    _answer_and_complete(parts, old_run, "old")
    live_task, _ = _task(parts)
    purged = purge_terminal_before(parts.ctx, utcnow() + timedelta(seconds=1))
    assert purged >= 1
    assert A2AStore(parts.ctx).get(old_task, None) is None
    assert A2AStore(parts.ctx).get(live_task, None) is not None


def test_sealed_task_columns_are_bound_to_their_row(parts: WorkerResources) -> None:
    a, _ = _task(parts)
    b, _ = _task(parts)
    with parts.ctx.sessions.begin() as s:
        history_a = s.scalar(select(A2ATaskRow.history).where(A2ATaskRow.id == a))
        s.execute(update(A2ATaskRow).where(A2ATaskRow.id == b).values(history=history_a))
    try:
        with pytest.raises(SealError):
            A2AStore(parts.ctx).get(b, None)
        with parts.ctx.sessions() as s:
            raw = s.scalar(select(A2ATaskRow.history).where(A2ATaskRow.id == a))
        assert raw is not None and "a@b.io" not in raw
    finally:
        # The session's database is shared: a row that cannot be opened would break every
        # later listing of its owner's tasks (tests/api/test_result.py lists them).
        with parts.ctx.sessions.begin() as s:
            s.execute(delete(A2ATaskRow).where(A2ATaskRow.id == b))


@pytest.fixture
def own_db(tmp_path: Path) -> Iterator[str]:
    """A database of its own: rotation rewrites every sealed value it finds."""
    with scratch_database("r", tmp_path / "rotate.db") as url:
        yield url


def test_rotation_reseals_every_sealed_column_under_the_active_key(own_db: str) -> None:
    old_key, new_key = b"o" * 32, b"n" * 32
    engine, ctx = open_store(own_db, Sealer({"old": old_key}, "old"))
    try:
        parts = WorkerResources(engine, ctx)
        task_id, run_id = _task(parts)
        req = ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full")
        project(ctx, req)
        _answer_and_complete(parts, run_id, "rotated answer")
        project(ctx, req)  # 4 events, 2 batches
        A2APushStore(ctx).upsert(
            task_id=task_id, config_id="c", url="http://127.0.0.1:9/", token="t",
            auth_scheme="Bearer", auth_credentials="cred",
        )  # fmt: skip
        both = replace(ctx, sealer=Sealer({"new": new_key, "old": old_key}, "new"))
        counts = rotate(both, batch=2)
        assert counts["a2a_task.history"] == 1 and counts["agent_message.body"] >= 2
        assert counts["a2a_event.payload"] == 4 and counts["a2a_push_config.token"] == 1
        assert rotate(both)["a2a_event.payload"] == 0  # nothing left under the old key
        only_new = replace(ctx, sealer=Sealer({"new": new_key}, "new"))
        task = A2AStore(only_new).get(task_id, None)
        assert task is not None and task.artifacts[0]["parts"][0]["text"] == "rotated answer"
        assert len(A2AJournal(only_new).events_after(task_id, -1)) >= 3
        assert RunStore(only_new).get(run_id) is not None
        cfg = A2APushStore(only_new).get(task_id, "c")
        assert cfg is not None and cfg.auth_credentials == "cred"
    finally:
        engine.dispose()


def _until_blocked_by(session: Session, within: float = 30.0) -> None:
    """Until another PostgreSQL backend waits on a lock this session's transaction holds."""
    # pg_locks, not pg_stat_activity: that one is read once per transaction (a snapshot).
    blocked = text(
        "SELECT count(*) FROM pg_locks"
        " WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"
    )
    deadline = time.monotonic() + within
    while not session.execute(blocked).scalar():
        assert time.monotonic() < deadline, "nothing ever waited on this transaction's locks"
        time.sleep(0.01)


@pytest.mark.skipif(backend() != "postgres", reason="row locks: SQLite takes the database lock")
def test_a_purge_waits_for_a_projection_in_flight_instead_of_deadlocking(
    parts: WorkerResources,
) -> None:
    """The projection (and the completion) lock the run row, then the task row. A purge
    that deleted the task first and then waited for the run row deadlocked with them."""
    task_id, run_id = _task(parts)
    purged: list[int] = []
    errors: list[BaseException] = []

    def purge() -> None:
        try:
            purged.append(purge_runs(parts.ctx, [run_id]))
        except BaseException as exc:
            errors.append(exc)

    with parts.ctx.sessions.begin() as s:  # the projection's transaction
        s.execute(select(RunRow.id).where(RunRow.id == run_id).with_for_update())
        purger = threading.Thread(target=purge)
        purger.start()
        # The purge is now waiting on whichever row it locks first: on a lock this
        # transaction holds.
        _until_blocked_by(s)
        s.execute(select(A2ATaskRow.id).where(A2ATaskRow.id == task_id).with_for_update())
    purger.join(timeout=30)
    assert not errors, errors
    assert purged == [1]
    assert A2AStore(parts.ctx).get(task_id, None) is None


def test_the_completion_asks_about_a_task_in_its_row_read_alone(parts: WorkerResources) -> None:
    """The hook's `applies` is read with the run row: a run that serves no task costs the
    completion no statement of the hook's own, and one that does still gets its result."""
    sent: list[str] = []

    def on_execute(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
        sent.append(statement)

    # The plan's privacy as an unknown plan reads it.
    snapshot = recorded("metadata", answer_level="full")
    run_id = begin_run(parts.ctx, snapshot=snapshot, prompt="hello")
    event.listen(parts.engine, "before_cursor_execute", on_execute)
    try:
        _answer_and_complete(parts, run_id, "no task here")
    finally:
        event.remove(parts.engine, "before_cursor_execute", on_execute)
    assert RunStore(parts.ctx).status(run_id) is RunStatus.COMPLETED
    touching = [s for s in sent if "a2a_task" in s]
    assert len(touching) == 1 and "agent_run" in touching[0]  # the completion's row read

    task_id, served = _task(parts)
    _answer_and_complete(parts, served, "with a task")
    task = A2AStore(parts.ctx).get(task_id, "alice")
    assert task is not None and task.state == "TASK_STATE_COMPLETED"


def test_a_run_completed_without_the_hook_gets_the_same_result_from_the_projection(
    parts: WorkerResources,
) -> None:
    """One writer of the result: the projection catches up, idempotently, on a run that a
    worker without the completion hook completed, and writes what the hook would have."""
    hooked_task, hooked_run = _task(parts)
    _answer_and_complete(parts, hooked_run, "The answer, mail me at bob@example.com")
    task_id, run_id = _task(parts)
    bare = WorkerResources(parts.engine, replace(parts.ctx, completion_hooks=()))
    _answer_and_complete(bare, run_id, "The answer, mail me at bob@example.com")
    before = A2AStore(parts.ctx).get(task_id, "alice")
    assert before is not None and before.state == "TASK_STATE_SUBMITTED" and not before.artifacts

    req = ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full")
    assert project(parts.ctx, req).events_written == 2  # the artifact, then the status
    assert project(parts.ctx, req).events_written == 0
    caught_up, hooked = (
        A2AStore(parts.ctx).get(task_id, None),
        A2AStore(parts.ctx).get(hooked_task, None),
    )
    assert caught_up is not None and hooked is not None
    assert caught_up.state == hooked.state == "TASK_STATE_COMPLETED"
    assert caught_up.artifacts == hooked.artifacts
    assert [m["role"] for m in caught_up.history] == ["ROLE_USER", "ROLE_AGENT"]
    assert caught_up.status_message is not None and hooked.status_message is not None
    assert caught_up.status_message["parts"] == hooked.status_message["parts"]
    events = A2AJournal(parts.ctx).events_after(task_id, -1)
    assert [e.kind for e in events][-2:] == ["artifact", "status"]
    assert events[-1].state == "TASK_STATE_COMPLETED"
