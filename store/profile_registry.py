"""The profiles the workers serve, as they registered them: what clients, the API and A2A
read to route a start and to refuse one they cannot serve, instead of parsing the workers'
profiles file. A profile no live worker serves is unknown to them.

A registration lives as long as the worker that made it (workers/compose.py holds it):
- at its start a worker upserts its profiles (a later worker with a changed profile
  replaces the row: the digest tells the copies apart; the same one leaves it) and one
  row per profile it serves, stamped with the time;
- while it runs it stamps its rows again every HEARTBEAT_SECONDS;
- on a graceful shutdown it deletes its rows; a profile then served by no worker stops
  routing at once, and its `changed_at` moves (the Agent Card's Last-Modified).
A worker that dies without shutting down stops routing once its rows are older than
STALE_AFTER (its runs would wait for a worker that is gone), and leaves `changed_at`
where it was."""

import logging
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    DateTime,
    Index,
    String,
    Text,
    delete,
    exists,
    func,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column

from agentrt.contracts.profiles import Profile, RegisteredProfile
from agentrt.store.context import StoreContext, as_utc, insert_ignoring, rowcount, utcnow
from agentrt.store.rows import Base

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 20.0
# Three missed heartbeats: a worker busy or briefly cut off from the database keeps routing.
STALE_AFTER = timedelta(seconds=3 * HEARTBEAT_SECONDS)


class ProfileRow(Base):
    __tablename__ = "agent_profile"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    task_queue: Mapped[str | None] = mapped_column(String(200))
    privacy: Mapped[str] = mapped_column(String(16))
    answer_level: Mapped[str] = mapped_column(String(16))
    writes_unapproved: Mapped[bool] = mapped_column(Boolean)
    publish: Mapped[bool] = mapped_column(Boolean)
    description: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(64))
    # When the registration last changed (a worker re-registering the same profile leaves
    # it): the Agent Card's Last-Modified.
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ServerRow(Base):
    """One worker serving one profile, and when it last said so."""

    __tablename__ = "agent_profile_server"
    __table_args__ = (Index("ix_agent_profile_server_name", "name", "seen_at"),)

    worker: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ProfileRegistry:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def register(self, profiles: Iterable[Profile], worker: str | None = None) -> str:
        """Upsert every profile's registration and the worker's claim to serve it, in one
        transaction; returns the worker's id (new unless given). Workers of a fleet start
        together: the insert yields to a row another worker wrote meanwhile, and the update
        then changes only a row whose digest differs."""
        worker = worker or uuid.uuid4().hex
        now = utcnow()
        table = ProfileRow.__table__
        with self._ctx.transaction() as conn:
            for profile in profiles:
                row = RegisteredProfile.of(profile).model_dump() | {"changed_at": now}
                conn.execute(insert_ignoring(conn, table, ["name"]), row)
                conn.execute(
                    update(ProfileRow)
                    .where(ProfileRow.name == row["name"], ProfileRow.digest != row["digest"])
                    .values({k: v for k, v in row.items() if k != "name"})
                )
                self._claim(conn, worker, row["name"], now)
        return worker

    def heartbeat(self, worker: str, names: Iterable[str]) -> None:
        """The worker still serves `names`: stamp its rows (and write any that are gone)."""
        now = utcnow()
        with self._ctx.transaction() as conn:
            for name in names:
                self._claim(conn, worker, name, now)

    def withdraw(self, worker: str) -> None:
        """The worker stops serving: its rows go, and a profile no live worker serves any
        more is marked changed now."""
        now = utcnow()
        with self._ctx.transaction() as conn:
            names = conn.scalars(select(ServerRow.name).where(ServerRow.worker == worker)).all()
            conn.execute(delete(ServerRow).where(ServerRow.worker == worker))
            if names:
                conn.execute(
                    update(ProfileRow)
                    .where(ProfileRow.name.in_(names), ~_served(now))
                    .values(changed_at=now)
                )

    @staticmethod
    def _claim(conn: Connection, worker: str, name: str, now: datetime) -> None:
        stamped = conn.execute(
            update(ServerRow)
            .where(ServerRow.worker == worker, ServerRow.name == name)
            .values(seen_at=now)
        )
        if rowcount(stamped) == 0:
            conn.execute(
                insert_ignoring(conn, ServerRow.__table__, ["worker", "name"]),
                {"worker": worker, "name": name, "seen_at": now},
            )

    def get(self, name: str) -> RegisteredProfile | None:
        with self._ctx.reads() as s:
            row = s.scalar(select(ProfileRow).where(ProfileRow.name == name, _served(utcnow())))
            return None if row is None else _registered(row)

    def changed_at(self) -> datetime | None:
        """When a registration last changed; None while no worker registered any."""
        with self._ctx.reads() as s:
            changed = as_utc(s.scalar(select(func.max(ProfileRow.changed_at))))
        # PostgreSQL answers in the session's zone: the same instant, said in UTC.
        return None if changed is None else changed.astimezone(UTC)

    def all(self) -> dict[str, RegisteredProfile]:
        with self._ctx.reads() as s:
            query = select(ProfileRow).where(_served(utcnow())).order_by(ProfileRow.name)
            return {row.name: _registered(row) for row in s.scalars(query).all()}


def _served(now: datetime) -> ColumnElement[bool]:
    """The profile row has a worker that said it serves it within STALE_AFTER."""
    return exists().where(ServerRow.name == ProfileRow.name, ServerRow.seen_at > now - STALE_AFTER)


class Registration:
    """A worker's registration for as long as it runs: stamped every HEARTBEAT_SECONDS by a
    daemon thread (a worker's event loop may be busy; the stamp must not wait for it), and
    withdrawn by `close()`."""

    def __init__(
        self,
        registry: ProfileRegistry,
        profiles: Iterable[Profile],
        every: float = HEARTBEAT_SECONDS,
    ) -> None:
        served = list(profiles)
        self._registry = registry
        self._names = [p.name for p in served]
        self.worker = registry.register(served)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(every,), name="agentrt-registration", daemon=True
        )
        self._thread.start()

    def _beat(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                self._registry.heartbeat(self.worker, self._names)
            except Exception as exc:  # the database is away: try again at the next beat
                log.warning("profile registration not renewed: %s", type(exc).__name__)

    def close(self) -> None:
        """Stop stamping and withdraw (once): the worker's profiles stop routing now."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        try:
            self._registry.withdraw(self.worker)
        except Exception as exc:  # they go stale after STALE_AFTER instead
            log.warning("profile registration not withdrawn: %s", type(exc).__name__)


def _registered(row: ProfileRow) -> RegisteredProfile:
    return RegisteredProfile.model_validate(
        {
            "name": row.name,
            "task_queue": row.task_queue,
            "privacy": row.privacy,
            "answer_level": row.answer_level,
            "writes_unapproved": row.writes_unapproved,
            "publish": row.publish,
            "description": row.description,
            "digest": row.digest,
        }
    )
