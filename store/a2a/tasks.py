"""The A2A task view as the API process writes and reads it: creation, owner-scoped reads,
listing, the client's follow-ups in the history. The worker's writes (the projection, the
run's result) are in activities/a2a.py."""

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentrt.store.a2a.journal import append_event
from agentrt.store.a2a.push import A2APushStore, PushSpec
from agentrt.store.a2a.view import (
    SUBMITTED,
    keep_text,
    status,
    status_update,
)
from agentrt.store.db.a2a_tables import A2ATaskRow
from agentrt.store.db.context import StoreContext, as_utc, dumps, utcnow
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.answer import keep_json
from agentrt.store.security.sealed import (
    TASK_ARTIFACTS,
    TASK_FIRST_MESSAGE_DIGEST,
    TASK_HISTORY,
    TASK_STATUS_MESSAGE,
    SealedColumn,
)


@dataclass(frozen=True)
class TaskRecord:
    id: str
    context_id: str
    workflow_id: str
    owner: str
    profile: str
    answer_level: str
    state: str
    status_message: dict[str, Any] | None
    status_at: datetime
    artifacts: list[dict[str, Any]]
    history: list[dict[str, Any]]
    metadata: dict[str, Any]
    journal_head: int
    # The digest of the request that created the task (None: made before migration 0017,
    # or outside the A2A server).
    first_digest: str | None = None


@dataclass(frozen=True)
class TaskPage:
    tasks: list[TaskRecord]
    total: int
    next_token: str


class FirstMessageTaken(Exception):
    """The owner already has a task created by this messageId: a resend, not a new task."""

    def __init__(self, task: "TaskRecord") -> None:
        super().__init__(task.id)
        self.task = task


def _cursor(ts: datetime, task_id: str) -> str:
    return base64.urlsafe_b64encode(f"{ts.isoformat()}|{task_id}".encode()).decode()


def parse_cursor(token: str) -> tuple[datetime, str]:
    """Raises ValueError for a token this server did not hand out."""
    raw = base64.urlsafe_b64decode(token.encode()).decode()
    ts, sep, task_id = raw.partition("|")
    if not sep or not task_id:
        raise ValueError("bad page token")
    parsed = as_utc(datetime.fromisoformat(ts))
    assert parsed is not None
    return parsed, task_id


def seal(sealer: Sealer, column: SealedColumn, task_id: str, value: Any) -> str:
    """A task column's JSON value, sealed to its row."""
    return column.seal(sealer, dumps(value), task_id)


def unseal(
    sealer: Sealer, column: SealedColumn, task_id: str, sealed: str | None, default: Any
) -> Any:
    if sealed is None:
        return default
    return json.loads(column.open(sealer, sealed, task_id))


class A2AStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def record(self, row: A2ATaskRow) -> TaskRecord:
        sealer, status_at = self._ctx.sealer, as_utc(row.status_at)
        assert status_at is not None
        return TaskRecord(
            id=row.id,
            context_id=row.context_id,
            workflow_id=row.workflow_id,
            owner=row.owner,
            profile=row.profile,
            answer_level=row.answer_level,
            state=row.state,
            status_message=unseal(sealer, TASK_STATUS_MESSAGE, row.id, row.status_message, None),
            status_at=status_at,
            artifacts=unseal(sealer, TASK_ARTIFACTS, row.id, row.artifacts, []),
            history=unseal(sealer, TASK_HISTORY, row.id, row.history, []),
            metadata=dict(json.loads(row.task_metadata or "{}")),
            journal_head=row.journal_head,
            first_digest=None
            if row.first_message_digest is None
            else TASK_FIRST_MESSAGE_DIGEST.open(sealer, row.first_message_digest, row.id),
        )

    # --- writes ----------------------------------------------------------------------------

    def create(
        self,
        *,
        task_id: str,
        context_id: str,
        workflow_id: str,
        owner: str,
        profile: str,
        answer_level: str,
        message: dict[str, Any],
        push: PushSpec | None = None,
        first_message_id: str | None = None,
        first_digest: str | None = None,
    ) -> TaskRecord:
        """Insert a SUBMITTED task with the client's message, and journal it (sequence 0);
        with `push`, its push config too, in the same transaction (both or neither).
        With `first_message_id`, at most one task per (owner, id): a second insert raises
        FirstMessageTaken with the task that won, and writes nothing."""
        kept = _kept_message(message, answer_level)
        now = utcnow()
        row = A2ATaskRow(
            id=task_id,
            context_id=context_id,
            workflow_id=workflow_id,
            run_id=None,
            owner=owner,
            first_message_id=first_message_id,
            first_message_digest=None
            if first_digest is None
            else TASK_FIRST_MESSAGE_DIGEST.seal(self._ctx.sealer, first_digest, task_id),
            profile=profile,
            answer_level=answer_level,
            state=SUBMITTED,
            history=seal(self._ctx.sealer, TASK_HISTORY, task_id, [kept]),
            task_metadata="{}",
            status_at=now,
            run_revision=-1,
            journal_head=-1,
            projected_state=SUBMITTED,
            created_at=now,
            updated_at=now,
        )
        payload = status_update(task_id, context_id, status(SUBMITTED, None, now), {})
        try:
            with self._ctx.sessions.begin() as s:
                s.add(row)
                s.flush()
                append_event(
                    s, self._ctx.sealer, row, run_revision=-1, slot=0, kind="status",
                    state=SUBMITTED, payload=payload,
                )  # fmt: skip
                if push is not None:
                    A2APushStore(self._ctx).add(s, task_id, push, from_start=True)
                return self.record(row)
        except IntegrityError:
            won = None if first_message_id is None else self.first(owner, first_message_id)
            if won is None:
                raise
            raise FirstMessageTaken(won) from None

    def delete(self, task_id: str) -> None:
        """Compensation when the run could not be started: the task never was."""
        with self._ctx.sessions.begin() as s:
            s.execute(delete(A2ATaskRow).where(A2ATaskRow.id == task_id))

    def add_client_message(
        self, task_id: str, owner: str, message: dict[str, Any], *, when_state: str
    ) -> tuple[TaskRecord, bool] | None:
        """Append a follow-up to the history if the task is still in `when_state`; returns
        (task, added). A message whose messageId the history already holds is a repeat:
        nothing changes and it comes back with added=False, whatever the state."""
        with self._ctx.sessions.begin() as s:
            row = self._locked(s, task_id, owner)
            if row is None:
                return None
            history = unseal(self._ctx.sealer, TASK_HISTORY, task_id, row.history, [])
            if any(m.get("messageId") == message["messageId"] for m in history):
                return self.record(row), False
            if row.state != when_state:
                return None
            history.append(_kept_message(message, row.answer_level))
            row.history = seal(self._ctx.sealer, TASK_HISTORY, task_id, history)
            row.updated_at = utcnow()
            return self.record(row), True

    def remove_client_message(self, task_id: str, message_id: str) -> None:
        with self._ctx.sessions.begin() as s:
            row = self._locked(s, task_id, None)
            if row is None:
                return
            history = unseal(self._ctx.sealer, TASK_HISTORY, task_id, row.history, [])
            kept = [m for m in history if m.get("messageId") != message_id]
            row.history = seal(self._ctx.sealer, TASK_HISTORY, task_id, kept)

    # --- reads -----------------------------------------------------------------------------

    def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task if it exists and (when an owner is given) belongs to that caller."""
        with self._ctx.sessions() as s:
            q = select(A2ATaskRow).where(A2ATaskRow.id == task_id)
            if owner is not None:
                q = q.where(A2ATaskRow.owner == owner)
            row = s.scalar(q)
            return None if row is None else self.record(row)

    def first(self, owner: str, message_id: str) -> TaskRecord | None:
        """The owner's task that this messageId created, if any (another owner's never)."""
        with self._ctx.sessions() as s:
            row = s.scalar(
                select(A2ATaskRow).where(
                    A2ATaskRow.owner == owner, A2ATaskRow.first_message_id == message_id
                )
            )
            return None if row is None else self.record(row)

    def page(
        self,
        *,
        owner: str,
        context_id: str | None = None,
        state: str | None = None,
        since: datetime | None = None,
        page_size: int = 50,
        token: str = "",
    ) -> TaskPage:
        """Newest status first, by (status timestamp, id); `total` counts all pages."""
        filters: list[Any] = [A2ATaskRow.owner == owner]
        if context_id:
            filters.append(A2ATaskRow.context_id == context_id)
        if state:
            filters.append(A2ATaskRow.state == state)
        if since is not None:
            filters.append(A2ATaskRow.status_at >= since)
        with self._ctx.sessions() as s:
            total = int(s.scalar(select(func.count()).select_from(A2ATaskRow).where(*filters)) or 0)
            q = select(A2ATaskRow).where(*filters)
            if token:
                ts, last_id = parse_cursor(token)
                q = q.where(
                    or_(
                        A2ATaskRow.status_at < ts,
                        and_(A2ATaskRow.status_at == ts, A2ATaskRow.id < last_id),
                    )
                )
            rows = s.scalars(
                q.order_by(A2ATaskRow.status_at.desc(), A2ATaskRow.id.desc()).limit(page_size + 1)
            ).all()
            page = [self.record(r) for r in rows[:page_size]]
        more = len(rows) > page_size
        next_token = _cursor(page[-1].status_at, page[-1].id) if more and page else ""
        return TaskPage(page, total, next_token)

    def _locked(self, s: Session, task_id: str, owner: str | None) -> A2ATaskRow | None:
        q = select(A2ATaskRow).where(A2ATaskRow.id == task_id)
        if owner is not None:
            q = q.where(A2ATaskRow.owner == owner)
        return s.scalar(q.with_for_update())


def _kept_message(message: dict[str, Any], level: str) -> dict[str, Any]:
    """A client message as the history keeps it: text parts at the answer level, and its
    metadata, keys and all, redacted at `redacted` as the text is."""
    kept = dict(message)
    kept["parts"] = [
        {**p, "text": keep_text(str(p["text"]), level)} if "text" in p else p
        for p in message.get("parts", [])
    ]
    if "metadata" in kept and level != "full":
        kept["metadata"] = keep_json(kept["metadata"], level)
    return kept
