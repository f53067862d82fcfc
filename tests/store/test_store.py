"""The store on the real database: guarded transitions, idempotent inserts, sealing."""

import base64
import time

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import select, text, update
from sqlalchemy.exc import OperationalError

from agentrt.contracts.enums import EventKind
from agentrt.contracts.errors import StoreUnavailableError
from agentrt.contracts.messages import Message
from agentrt.contracts.run import TurnRecord
from agentrt.store.db import migrate
from agentrt.store.db.engine import PING_IDLE_SECONDS, make_engine
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer, SealError
from agentrt.store.db.tables import MessageRow
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run, new_run
from tests._snapshots import recorded

SNAPSHOT = recorded("full")


def _begin(parts: WorkerResources, privacy: str = "full") -> str:
    return begin_run(parts.ctx, snapshot=SNAPSHOT, prompt="hello mail a@b.io", privacy=privacy)


def _answer(parts: WorkerResources, run_id: str, seq: int = 1) -> None:
    RunStore(parts.ctx).record_turn(
        run_id,
        TurnRecord(
            seq,
            1,
            Message(role="assistant", content="the answer"),
            {"content": "the answer"},
            1.0,
            "full",
        ),
    )


def test_begin_is_idempotent_on_the_uuid(parts: WorkerResources) -> None:
    run_id = _begin(parts)
    runs = RunStore(parts.ctx)
    assert not runs.begin(new_run(run_id, snapshot=SNAPSHOT, prompt="hello"))
    assert [e.sequence for e in runs.events(run_id)] == [0]
    assert len(runs.transcript(run_id)) == 1


def test_events_and_messages_are_written_once_per_sequence(parts: WorkerResources) -> None:
    run_id = _begin(parts)
    _answer(parts, run_id)
    _answer(parts, run_id)  # a retried activity
    runs = RunStore(parts.ctx)
    assert [e.kind for e in runs.events(run_id)] == [EventKind.RUN_STARTED, EventKind.LLM]
    assert [m.role for m in runs.transcript(run_id)] == ["user", "assistant"]
    assert [e.sequence for e in runs.events(run_id, after_position=0)] == [1]


def test_stored_content_is_sealed_and_bound_to_its_row(parts: WorkerResources) -> None:
    run_id = _begin(parts)
    with parts.ctx.sessions() as s:
        body = s.scalar(select(MessageRow.body).where(MessageRow.run_id == run_id))
    assert body is not None and body.startswith("s1.") and "hello" not in body
    other = _begin(parts)
    with parts.ctx.sessions.begin() as s:  # move a sealed value to another row
        s.execute(update(MessageRow).where(MessageRow.run_id == other).values(body=body))
    with pytest.raises(SealError):
        RunStore(parts.ctx).transcript(other)


def test_sealer_rotation_keeps_old_values_readable() -> None:
    old = Sealer({"k1": b"a" * 32}, "k1")
    sealed = old.seal("secret", table="t", column="c", row="1")
    both = Sealer({"k2": b"b" * 32, "k1": b"a" * 32}, "k2")
    assert both.open(sealed, table="t", column="c", row="1") == "secret"
    assert both.key_id(both.seal("x", table="t", column="c", row="1")) == "k2"
    with pytest.raises(SealError):
        Sealer({"k2": b"b" * 32}, "k2").open(sealed, table="t", column="c", row="1")
    spec = "k1:" + base64.b64encode(b"a" * 32).decode()
    assert Sealer.from_b64(spec).open(sealed, table="t", column="c", row="1") == "secret"


def test_privacy_levels_filter_event_payloads(parts: WorkerResources) -> None:
    runs = RunStore(parts.ctx)
    meta = _begin(parts, privacy="metadata")
    started = runs.events(meta)[0].payload
    assert "prompt" not in started and started["prompt_size"] == len("hello mail a@b.io")
    redacted = _begin(parts, privacy="redacted")
    assert runs.events(redacted)[0].payload["prompt"] == "hello mail ***"


def test_an_unreachable_database_is_a_typed_error() -> None:
    sealer = Sealer({"k": b"k" * 32}, "k")
    with pytest.raises(StoreUnavailableError):
        open_store("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2", sealer)


def test_migrations_reach_head(parts: WorkerResources) -> None:
    scripts = ScriptDirectory.from_config(migrate._config())
    with parts.engine.connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert version == scripts.get_current_head()


@pytest.mark.skipif(backend() != "postgres", reason="a pooled connection the server closed")
def test_a_pooled_connection_the_server_closed_is_replaced(parts: WorkerResources) -> None:
    """Idle past PING_IDLE_SECONDS: pinged at checkout and replaced, no error. Back within
    it: its first statement fails (a store outage to the caller, retried) and the pool is
    invalidated, so the next checkout works."""
    engine = make_engine(parts.engine.url.render_as_string(hide_password=False))

    def backend_pid() -> int:
        with engine.connect() as c:
            return int(c.execute(text("SELECT pg_backend_pid()")).scalar_one())

    def terminate(pid: int) -> None:
        with parts.engine.connect() as c:
            c.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            c.commit()

    try:
        terminate(backend_pid())
        time.sleep(PING_IDLE_SECONDS + 0.3)
        with engine.connect() as c:
            assert c.execute(text("SELECT 1")).scalar_one() == 1
        terminate(backend_pid())
        with pytest.raises(OperationalError), engine.connect() as c:
            c.execute(text("SELECT 1"))
        with engine.connect() as c:
            assert c.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        engine.dispose()
