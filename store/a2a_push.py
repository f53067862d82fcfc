"""Push-notification configs of A2A tasks, and the record of every delivery attempt.

A config has a journal cursor (`delivered_through`); the delivery loop takes a short lease
on a config, delivers the next journal event, and records the attempt; the cursor moves on
when the event was delivered or given up. Credentials are sealed.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from agentrt.store.a2a_rows import A2APushConfigRow, A2APushDeliveryRow, A2ATaskRow
from agentrt.store.context import StoreContext, as_utc, utcnow
from agentrt.store.sealed import PUSH_AUTH_CREDENTIALS, PUSH_TOKEN, SealedColumn, within


@dataclass(frozen=True)
class PushConfig:
    task_id: str
    id: str
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None
    delivered_through: int


@dataclass(frozen=True)
class Delivery:
    sequence: int
    attempts: int
    status: str
    last_error: str | None
    delivered_at: datetime | None


class A2APushStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def _seal(self, column: SealedColumn, row: str, value: str | None) -> str | None:
        if value is None:
            return None
        return column.seal(self._ctx.sealer, value, row)

    def _open(self, column: SealedColumn, row: str, value: str | None) -> str | None:
        if value is None:
            return None
        return column.open(self._ctx.sealer, value, row)

    def _config(self, r: A2APushConfigRow) -> PushConfig:
        key = within(r.task_id, r.id)
        return PushConfig(
            task_id=r.task_id,
            id=r.id,
            url=r.url,
            token=self._open(PUSH_TOKEN, key, r.token),
            auth_scheme=r.auth_scheme,
            auth_credentials=self._open(PUSH_AUTH_CREDENTIALS, key, r.auth_credentials),
            delivered_through=r.delivered_through,
        )

    def upsert(
        self,
        *,
        task_id: str,
        config_id: str,
        url: str,
        token: str | None,
        auth_scheme: str | None,
        auth_credentials: str | None,
        from_start: bool = False,
    ) -> PushConfig | None:
        """Create or replace a config. A new one delivers events after the current journal
        head (or all of them with from_start). None when the task does not exist."""
        key = within(task_id, config_id)
        with self._ctx.sessions.begin() as s:
            head = s.scalar(select(A2ATaskRow.journal_head).where(A2ATaskRow.id == task_id))
            if head is None:
                return None
            row = s.get(A2APushConfigRow, (task_id, config_id))
            if row is None:
                row = A2APushConfigRow(
                    task_id=task_id,
                    id=config_id,
                    delivered_through=-1 if from_start else head,
                    created_at=utcnow(),
                )
                s.add(row)
            row.url = url
            row.token = self._seal(PUSH_TOKEN, key, token)
            row.auth_scheme = auth_scheme
            row.auth_credentials = self._seal(PUSH_AUTH_CREDENTIALS, key, auth_credentials)
            s.flush()
            return self._config(row)

    def get(self, task_id: str, config_id: str) -> PushConfig | None:
        with self._ctx.sessions() as s:
            row = s.get(A2APushConfigRow, (task_id, config_id))
            return None if row is None else self._config(row)

    def configs(self, task_id: str) -> list[PushConfig]:
        with self._ctx.sessions() as s:
            rows = s.scalars(
                select(A2APushConfigRow)
                .where(A2APushConfigRow.task_id == task_id)
                .order_by(A2APushConfigRow.created_at, A2APushConfigRow.id)
            ).all()
            return [self._config(r) for r in rows]

    def delete(self, task_id: str, config_id: str) -> None:
        with self._ctx.sessions.begin() as s:
            s.execute(
                delete(A2APushConfigRow).where(
                    A2APushConfigRow.task_id == task_id, A2APushConfigRow.id == config_id
                )
            )

    # --- delivery --------------------------------------------------------------------------

    def claim(self, lease_seconds: float, limit: int = 20) -> list[PushConfig]:
        """Configs with undelivered events whose next attempt is due; leased to the caller."""
        now = utcnow()
        with self._ctx.sessions.begin() as s:
            rows = s.scalars(
                select(A2APushConfigRow)
                .join(A2ATaskRow, A2ATaskRow.id == A2APushConfigRow.task_id)
                .where(
                    A2ATaskRow.journal_head > A2APushConfigRow.delivered_through,
                    or_(A2APushConfigRow.lease_until.is_(None), A2APushConfigRow.lease_until < now),
                )
                .limit(limit)
                .with_for_update(skip_locked=True, of=A2APushConfigRow)
            ).all()
            claimed = []
            for row in rows:
                pending = self._delivery(s, row, row.delivered_through + 1)
                due = as_utc(pending.next_attempt_at) if pending is not None else None
                if due is not None and due > now:
                    continue
                row.lease_until = now + timedelta(seconds=lease_seconds)
                claimed.append(self._config(row))
            return claimed

    @staticmethod
    def _delivery(s: Session, row: A2APushConfigRow, sequence: int) -> A2APushDeliveryRow | None:
        return s.scalar(
            select(A2APushDeliveryRow).where(
                A2APushDeliveryRow.task_id == row.task_id,
                A2APushDeliveryRow.config_id == row.id,
                A2APushDeliveryRow.sequence == sequence,
            )
        )

    def record(
        self,
        cfg: PushConfig,
        sequence: int,
        *,
        ok: bool,
        error: str | None,
        retry_in: float | None,
    ) -> None:
        """Record one attempt; the cursor moves on when delivered or given up (retry_in None)."""
        now = utcnow()
        with self._ctx.sessions.begin() as s:
            row = s.get(A2APushConfigRow, (cfg.task_id, cfg.id))
            if row is None:
                return  # deleted meanwhile
            d = self._delivery(s, row, sequence)
            if d is None:
                d = A2APushDeliveryRow(
                    task_id=cfg.task_id, config_id=cfg.id, sequence=sequence, attempts=0,
                    created_at=now,
                )  # fmt: skip
                s.add(d)
            d.attempts += 1
            d.last_error = None if ok else (error or "error")[:200]
            if ok:
                d.status, d.delivered_at, d.next_attempt_at = "delivered", now, now
            elif retry_in is None:
                d.status, d.next_attempt_at = "failed", now
            else:
                d.status, d.next_attempt_at = "pending", now + timedelta(seconds=retry_in)
            if ok or retry_in is None:
                row.delivered_through = max(row.delivered_through, sequence)
            row.lease_until = None

    def deliveries(self, task_id: str, config_id: str) -> list[Delivery]:
        with self._ctx.sessions() as s:
            rows = s.scalars(
                select(A2APushDeliveryRow)
                .where(
                    A2APushDeliveryRow.task_id == task_id,
                    A2APushDeliveryRow.config_id == config_id,
                )
                .order_by(A2APushDeliveryRow.sequence)
            ).all()
            return [
                Delivery(r.sequence, r.attempts, r.status, r.last_error, as_utc(r.delivered_at))
                for r in rows
            ]
