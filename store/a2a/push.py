"""Push-notification configs of A2A tasks, and the record of every delivery attempt.

A config has a journal cursor (`delivered_through`); the delivery loop takes a short lease
on a config, delivers the next journal event, and records the attempt; the cursor moves on
when the event was delivered or given up. Credentials and the URL are sealed.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from agentrt.store.db.a2a_tables import A2APushConfigRow, A2APushDeliveryRow, A2ATaskRow
from agentrt.store.db.context import StoreContext, as_utc, utcnow
from agentrt.store.security.sealed import (
    PUSH_AUTH_CREDENTIALS,
    PUSH_TOKEN,
    PUSH_URL,
    SealedColumn,
    within,
)


@dataclass(frozen=True)
class PushConfig:
    task_id: str
    id: str
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None
    delivered_through: int
    owner: str = ""  # the task's owner (set by claim): delivery is fair per client
    dead_reason: str | None = None


@dataclass(frozen=True)
class PushSpec:
    """A config as a client asked for it, checked before anything is written."""

    config_id: str
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None


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

    def _config(self, r: A2APushConfigRow, owner: str = "") -> PushConfig:
        key = within(r.task_id, r.id)
        return PushConfig(
            owner=owner,
            dead_reason=r.dead_reason,
            task_id=r.task_id,
            id=r.id,
            url=PUSH_URL.open(self._ctx.sealer, r.url, key),
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
        spec = PushSpec(config_id, url, token, auth_scheme, auth_credentials)
        with self._ctx.sessions.begin() as s:
            return self.add(s, task_id, spec, from_start=from_start)

    def add(
        self, s: Session, task_id: str, spec: PushSpec, *, from_start: bool
    ) -> PushConfig | None:
        """upsert within the caller's transaction (a task's creation writes its config in
        the same transaction as the task: both or neither)."""
        key = within(task_id, spec.config_id)
        head = s.scalar(select(A2ATaskRow.journal_head).where(A2ATaskRow.id == task_id))
        if head is None:
            return None
        row = s.get(A2APushConfigRow, (task_id, spec.config_id))
        if row is None:
            row = A2APushConfigRow(
                task_id=task_id,
                id=spec.config_id,
                delivered_through=-1 if from_start else head,
                created_at=utcnow(),
            )
            s.add(row)
        elif row.dead_at is not None:  # registered again: a fresh start for the dead letter
            row.dead_at, row.dead_reason = None, None
            s.execute(
                delete(A2APushDeliveryRow).where(
                    A2APushDeliveryRow.task_id == task_id,
                    A2APushDeliveryRow.config_id == spec.config_id,
                    A2APushDeliveryRow.status == "dead",
                )
            )
        row.url = PUSH_URL.seal(self._ctx.sealer, spec.url, key)
        row.token = self._seal(PUSH_TOKEN, key, spec.token)
        row.auth_scheme = spec.auth_scheme
        row.auth_credentials = self._seal(PUSH_AUTH_CREDENTIALS, key, spec.auth_credentials)
        row.lease_until = None
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

    def claim(
        self,
        lease_seconds: float,
        limit: int = 20,
        *,
        busy: Mapping[str, int] | None = None,
        per_owner: int | None = None,
    ) -> list[PushConfig]:
        """Configs with undelivered events whose next attempt is due; leased to the caller.
        `busy` counts the caller's deliveries in flight per owner: no owner gets more than
        `per_owner` in all, so one client's many (or slow) webhooks cannot crowd out
        another's (an owner at the limit is left out of the query, not just of the result)."""
        busy = dict(busy or {})
        now = utcnow()
        query = (
            select(A2APushConfigRow, A2ATaskRow.owner)
            .join(A2ATaskRow, A2ATaskRow.id == A2APushConfigRow.task_id)
            .where(
                A2ATaskRow.journal_head > A2APushConfigRow.delivered_through,
                A2APushConfigRow.dead_at.is_(None),
                or_(A2APushConfigRow.lease_until.is_(None), A2APushConfigRow.lease_until < now),
            )
            .order_by(A2APushConfigRow.lease_until.nulls_first(), A2APushConfigRow.created_at)
            .limit(limit)
            .with_for_update(skip_locked=True, of=A2APushConfigRow)
        )
        full = sorted(o for o, n in busy.items() if per_owner is not None and n >= per_owner)
        if full:
            query = query.where(A2ATaskRow.owner.not_in(full))
        with self._ctx.sessions.begin() as s:
            claimed: list[PushConfig] = []
            taken = busy
            for row, owner in s.execute(query).all():
                if per_owner is not None and taken.get(owner, 0) >= per_owner:
                    continue
                pending = self._delivery(s, row, row.delivered_through + 1)
                due = as_utc(pending.next_attempt_at) if pending is not None else None
                if due is not None and due > now:
                    continue
                row.lease_until = now + timedelta(seconds=lease_seconds)
                taken[owner] = taken.get(owner, 0) + 1
                claimed.append(self._config(row, owner))
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
        """Record one attempt. Delivered: the cursor moves on. Failed with a retry: not due
        (nor claimable) before it. Failed without one: a dead letter, the config with it."""
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
            row.lease_until = None
            if ok:
                d.status, d.delivered_at, d.next_attempt_at = "delivered", now, now
                row.delivered_through = max(row.delivered_through, sequence)
            elif retry_in is None:
                d.status, d.next_attempt_at = "dead", now
                row.dead_at, row.dead_reason = now, d.last_error
            else:
                d.status, d.next_attempt_at = "pending", now + timedelta(seconds=retry_in)
                row.lease_until = d.next_attempt_at

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


def count_dead(ctx: StoreContext) -> int:
    """Dead letters: deliveries given up (the metric agentrt_push_dead_letters_total)."""
    with ctx.sessions() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(A2APushDeliveryRow)
                .where(A2APushDeliveryRow.status == "dead")
            )
            or 0
        )


def last_dead_at(ctx: StoreContext) -> float:
    """When the newest dead letter was given up, in Unix seconds (0 when there is none): the
    gauge an alert on new dead letters reads (a purge removes old ones, so unlike the count
    it never looks like a new one)."""
    with ctx.sessions() as s:
        newest = as_utc(
            s.scalar(
                select(func.max(A2APushDeliveryRow.next_attempt_at)).where(
                    A2APushDeliveryRow.status == "dead"
                )
            )
        )
    return 0.0 if newest is None else newest.timestamp()
