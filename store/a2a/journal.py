"""The A2A event journal: appends under the task-row lock, ordered reads, folded snapshots."""

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentrt.store.db.a2a_tables import A2AEventRow, A2ATaskRow
from agentrt.store.db.context import StoreContext, dumps, insert_ignoring, utcnow
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import in_sequence
from agentrt.store.security.sealed import TASK_EVENT_PAYLOAD, within


@dataclass(frozen=True)
class JournalEvent:
    sequence: int
    kind: str
    state: str
    payload: dict[str, Any]  # a StreamResponse as ProtoJSON


def append_event(
    s: Session,
    sealer: Sealer,
    task: A2ATaskRow,
    *,
    run_revision: int,
    slot: int,
    kind: str,
    state: str,
    payload: dict[str, Any],
) -> int:
    """Append one event at the task's next sequence; the caller holds the task-row lock.

    The unique (task, run revision, slot) key makes a re-projected revision write nothing.
    Returns the sequence written, or -1 when the event already existed.
    """
    sequence = task.journal_head + 1
    inner = next(iter(payload.values()))
    inner.setdefault("metadata", {})["sequence"] = sequence
    sealed = TASK_EVENT_PAYLOAD.seal(sealer, dumps(payload), within(task.id, sequence))
    res = s.execute(
        insert_ignoring(s, A2AEventRow.__table__, ["task_id", "run_revision", "slot"]).returning(
            A2AEventRow.id
        ),
        {
            "task_id": task.id,
            "sequence": sequence,
            "run_revision": run_revision,
            "slot": slot,
            "kind": kind,
            "state": state,
            "payload": sealed,
            "created_at": utcnow(),
        },
    )
    if res.first() is None:
        return -1
    task.journal_head = sequence
    return sequence


class A2AJournal:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def events_after(self, task_id: str, after: int, limit: int = 200) -> list[JournalEvent]:
        query = select(A2AEventRow).where(A2AEventRow.task_id == task_id)
        with self._ctx.sessions() as s:
            rows = s.scalars(in_sequence(query, A2AEventRow.sequence, after, limit)).all()
        return [self._open(r) for r in rows]

    def head(self, task_id: str) -> int | None:
        with self._ctx.sessions() as s:
            value = s.scalar(select(A2ATaskRow.journal_head).where(A2ATaskRow.id == task_id))
        return None if value is None else int(value)

    def snapshot(self, task_id: str, upto: int) -> tuple[dict[str, Any], str] | None:
        """The Task as the journal tells it up to `upto` (status, artifacts, metadata).

        Returns (Task ProtoJSON, state), or None when the task or its first event is gone.
        """
        with self._ctx.sessions() as s:
            rows = s.scalars(
                select(A2AEventRow)
                .where(A2AEventRow.task_id == task_id, A2AEventRow.sequence <= upto)
                .order_by(A2AEventRow.sequence)
            ).all()
        events = [self._open(r) for r in rows]
        if not events:
            return None
        task: dict[str, Any] = {"id": task_id}
        artifacts: dict[str, dict[str, Any]] = {}
        state = ""
        for ev in events:
            if "statusUpdate" in ev.payload:
                upd = ev.payload["statusUpdate"]
                task["contextId"] = upd["contextId"]
                task["status"] = upd["status"]
                meta = {k: v for k, v in upd.get("metadata", {}).items() if k != "sequence"}
                task["metadata"] = {**meta, "sequence": ev.sequence}
                state = ev.state
            elif "artifactUpdate" in ev.payload:
                art = ev.payload["artifactUpdate"]["artifact"]
                artifacts[art["artifactId"]] = art
        if artifacts:
            task["artifacts"] = list(artifacts.values())
        task.setdefault("metadata", {})["sequence"] = events[-1].sequence
        return task, state

    def _open(self, row: A2AEventRow) -> JournalEvent:
        raw = TASK_EVENT_PAYLOAD.open(self._ctx.sealer, row.payload, TASK_EVENT_PAYLOAD.row_of(row))
        return JournalEvent(row.sequence, row.kind, row.state, dict(json.loads(raw)))
