"""The operator API's reads take no write lock: a read answers at once while a writer holds
the lock (on SQLite, a BEGIN IMMEDIATE; on PostgreSQL, a row lock), and reads the last
committed state; every write still locks up front."""

import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import update

from agentrt.contracts.enums import RunStatus
from agentrt.store.db.tables import RunRow
from agentrt.store.live.table import LiveStore
from agentrt.store.ops.gauges import count_with_status, oldest_waiting_seconds
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._runs import begin_run
from tests._snapshots import recorded

SNAPSHOT = recorded("full")


def _begun(parts: WorkerResources) -> str:
    return begin_run(parts.ctx, snapshot=SNAPSHOT, initiator="reader")


def _reads(parts: WorkerResources, run_id: str, secret: str, token_id: str) -> dict[str, Any]:
    runs, query, principals = RunStore(parts.ctx), RunQuery(parts.ctx), PrincipalStore(parts.ctx)
    live = LiveStore(parts.ctx)
    every: dict[str, Callable[[], Any]] = {
        "get": lambda: runs.get(run_id),
        "status": lambda: runs.status(run_id),
        "events": lambda: runs.events(run_id),
        "runs.inbox": lambda: runs.inbox(),
        "page": lambda: query.page(visible_to="reader", limit=5),
        "inbox": lambda: query.inbox(visible_to="reader"),
        "attention": lambda: query.attention(visible_to="reader"),
        "privacy": lambda: query.privacy(run_id),
        "authenticate": lambda: principals.authenticate(secret),
        "active": lambda: principals.active(token_id),
        "tokens": lambda: principals.list("reader"),
        "live": lambda: live.read(run_id),
        "mark": lambda: live.mark(run_id),
        "count": lambda: count_with_status(parts.ctx, RunStatus.RUNNING),
        "oldest": lambda: oldest_waiting_seconds(parts.ctx),
    }
    got: dict[str, Any] = {}
    # Each read returns while the writer still holds its lock (it commits only after them):
    # a read that waited for the writer would instead fail at the busy timeout (SQLite) or
    # never return (the test's timeout), so returning at all is the proof, not a time.
    for name, read in every.items():
        got[name] = read()
    return got


def test_reads_proceed_while_a_writer_holds_the_lock(parts: WorkerResources) -> None:
    run_id = _begun(parts)
    info, secret = PrincipalStore(parts.ctx).create("reader", ["runs:read"])
    with ThreadPoolExecutor(1) as pool, parts.ctx.engine.connect() as writer:
        # Uncommitted: the run moves to WAITING_FOR_APPROVAL; the lock is held meanwhile.
        # Rolled back after: committed, the row (waiting, with no pending turn) stayed in
        # the session's database, first in every later inbox (CI: the page's inbox broke).
        pending = writer.begin()
        try:
            writer.execute(
                update(RunRow)
                .where(RunRow.id == run_id)
                .values(status=RunStatus.WAITING_FOR_APPROVAL.value)
            )
            got = pool.submit(_reads, parts, run_id, secret, info.id).result(timeout=60)
        finally:
            pending.rollback()
    assert RunStore(parts.ctx).status(run_id) is RunStatus.RUNNING
    # The reads saw the last committed state, not the writer's pending one.
    assert got["status"] is RunStatus.RUNNING and got["get"].status is RunStatus.RUNNING
    assert [v.run_id for v in got["inbox"]] == []
    assert got["authenticate"] is not None and got["active"]
    assert [e.sequence for e in got["events"]] == [0]


@pytest.mark.skipif(backend() == "postgres", reason="SQLite's database write lock")
def test_a_write_still_takes_the_write_lock_up_front(parts: WorkerResources) -> None:
    """The other side of the boundary: while a store write transaction is open, another
    writer is refused the lock at BEGIN (so a guarded read-then-write never interleaves),
    and a reader is not."""
    url = parts.ctx.sessions.kw["bind"].url.database
    with parts.ctx.transaction():
        other = sqlite3.connect(url, timeout=0.2, isolation_level=None)
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            other.execute("BEGIN")
            other.execute("SELECT count(*) FROM agent_run").fetchone()
            other.execute("ROLLBACK")
        finally:
            other.close()
