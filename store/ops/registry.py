"""The profiles the workers serve, as they registered them: what clients, the API and A2A
read to route a start and to refuse one they cannot serve, instead of parsing the workers'
profiles file. A profile no live worker serves is unknown to them.

A registration lives as long as the worker that made it (workers/compose.py holds it):
- at its start a worker writes one row per profile it serves, under its own id;
- while it runs it stamps its rows every HEARTBEAT_SECONDS (`seen_at`);
- on a graceful shutdown it withdraws them: a profile then served by no worker stops
  routing at once.
A worker that dies without shutting down stops routing once its rows are older than
STALE_AFTER (its runs would wait for a worker that is gone).

Two live workers may serve two copies of a profile (a rolling deploy): the copy registered
last routes, and when its worker goes, the other's routes again. `changed_at` (the Agent
Card's Last-Modified) moves when a registration brings a copy no live worker served, and
when one is withdrawn; a worker registering a copy already served leaves it. A stale row
leaves it too. Rows of workers unseen for PURGE_AFTER are deleted when a worker starts."""

import logging
import threading
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ColumnElement,
    DateTime,
    Index,
    String,
    Text,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.elements import BindParameter

from agentrt.contracts.profiles import Profile, Reach
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.db.context import StoreContext, as_utc, rowcount, utcnow
from agentrt.store.db.tables import Base

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 20.0
# Three missed stamps: a worker busy or briefly cut off from the database keeps routing.
STALE_AFTER = timedelta(seconds=3 * HEARTBEAT_SECONDS)
PURGE_AFTER = timedelta(days=7)
# A registration's queue is watched for pollers this long after its worker was last seen.
QUEUES_SEEN_WITHIN = timedelta(days=1)


class ServerRow(Base):
    """One worker's registration of one profile."""

    __tablename__ = "agent_profile_server"
    __table_args__ = (Index("ix_agent_profile_server_name", "name", "seen_at"),)

    worker: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    task_queue: Mapped[str | None] = mapped_column(String(200))
    privacy: Mapped[str] = mapped_column(String(16))
    answer_level: Mapped[str] = mapped_column(String(16))
    writes_unapproved: Mapped[bool] = mapped_column(Boolean)
    publish: Mapped[bool] = mapped_column(Boolean)
    description: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(64))
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # When the worker last said it serves the profile; NULL once it withdrew.
    seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The payload key ids the worker decrypts with, active first ("" none; NULL: a row
    # of a build before 0015, which did not say).
    payload_keys: Mapped[str | None] = mapped_column(String(500))
    # What its tools may do (RegisteredProfile.reach) and its typed answer's schema, for
    # the MCP server's tools (NULL: not said, or a row of a build before 0020).
    reach: Mapped[str | None] = mapped_column(String(16))
    output_schema: Mapped[Any] = mapped_column(JSON)


# What a registration says of a profile (RegisteredProfile's fields).
_COLUMNS = [
    ServerRow.name,
    ServerRow.task_queue,
    ServerRow.privacy,
    ServerRow.answer_level,
    ServerRow.writes_unapproved,
    ServerRow.publish,
    ServerRow.description,
    ServerRow.digest,
    ServerRow.payload_keys,
    ServerRow.reach,
    ServerRow.output_schema,
]


class ProfileRegistry:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def register(
        self,
        profiles: Iterable[Profile],
        worker: str | None = None,
        payload_keys: Iterable[str] | None = None,
        reach: Mapping[str, Reach | None] | None = None,
    ) -> str:
        """Write the worker's registration of every profile, in one transaction; returns the
        worker's id (new unless given; given, its rows are written again). `payload_keys`:
        the key ids it decrypts Temporal payloads with, active first (empty: none);
        `reach`: what each profile's tools may do, by name (absent: not said)."""
        reach = reach or {}
        keys = None if payload_keys is None else list(payload_keys)
        worker = worker or uuid.uuid4().hex
        now = utcnow()
        with self._ctx.transaction() as conn:
            conn.execute(delete(ServerRow).where(ServerRow.worker == worker))
            conn.execute(delete(ServerRow).where(_unseen_since(now - PURGE_AFTER)))
            for profile in profiles:
                row: dict[str, Any] = RegisteredProfile.of(
                    profile, keys, reach.get(profile.name)
                ).model_dump()
                # A copy a live worker serves already changes nothing a reader sees.
                served = conn.scalar(
                    select(func.min(ServerRow.changed_at)).where(
                        ServerRow.name == row["name"],
                        ServerRow.digest == row["digest"],
                        _live(now),
                    )
                )
                row |= {
                    "worker": worker,
                    "registered_at": now,
                    "changed_at": served or now,
                    "seen_at": now,
                }
                conn.execute(insert(ServerRow), row)
        return worker

    def heartbeat(self, worker: str) -> bool:
        """The worker still serves what it registered: stamp its rows. False when it has
        none left (withdrawn, or purged after a long absence): it must register again."""
        with self._ctx.transaction() as conn:
            stamped = conn.execute(
                update(ServerRow)
                .where(ServerRow.worker == worker, ServerRow.seen_at.is_not(None))
                .values(seen_at=utcnow())
            )
        return rowcount(stamped) > 0

    def withdraw(self, worker: str) -> None:
        """The worker stops serving: its rows stop routing now, and say when."""
        now = utcnow()
        with self._ctx.transaction() as conn:
            conn.execute(
                update(ServerRow)
                .where(ServerRow.worker == worker, ServerRow.seen_at.is_not(None))
                .values(seen_at=None, changed_at=now)
            )

    # Reads run Core statements on a connection, not the ORM: `get` is on the path of
    # every start a client makes.

    def get(self, name: str) -> RegisteredProfile | None:
        """The profile as a live worker registered it last; None if none serves it. On the
        path of every start: one statement built once (`python -m bench.store_calls`)."""
        with self._ctx.read_rows() as conn:
            found = conn.execute(_GET, {"name": name, "live_after": _live_after(utcnow())}).all()
        if not found:
            return None
        return RegisteredProfile.model_validate(dict(zip(_NAMES, found[0], strict=True)))

    def changed_at(self) -> datetime | None:
        """When a registration last changed; None while no worker registered any."""
        with self._ctx.read_rows() as conn:
            changed = as_utc(conn.scalar(select(func.max(ServerRow.changed_at))))
        # PostgreSQL answers in the session's zone: the same instant, said in UTC.
        return None if changed is None else changed.astimezone(UTC)

    def all(self) -> dict[str, RegisteredProfile]:
        """Each profile a live worker serves, as registered last."""
        query = select(*_COLUMNS).where(_live(utcnow())).order_by(ServerRow.registered_at)
        with self._ctx.read_rows() as conn:
            rows = conn.execute(query).mappings().all()
        latest = {row["name"]: RegisteredProfile.model_validate(dict(row)) for row in rows}
        return dict(sorted(latest.items()))

    def task_queues(self, within: timedelta = QUEUES_SEEN_WITHIN) -> set[str | None]:
        """The task queues of the profiles workers registered and did not withdraw, seen
        within `within` (None: the client's default queue). A worker that died without
        withdrawing leaves its queue here, so the queue is watched for pollers (core/
        queue_pollers.py) until a day after it was last seen."""
        query = select(ServerRow.task_queue).distinct().where(_seen_after(utcnow() - within))
        with self._ctx.read_rows() as conn:
            return {row[0] for row in conn.execute(query)}


def _live(now: datetime) -> ColumnElement[bool]:
    """A row whose worker said within STALE_AFTER that it serves the profile."""
    return _seen_after(_live_after(now))


def _live_after(now: datetime) -> datetime:
    return now - STALE_AFTER


def _seen_after(cutoff: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
    return ServerRow.seen_at > cutoff


_NAMES = [c.key for c in _COLUMNS]
# A profile's latest live registration (`get`), built once: `live_after` is _live_after(now).
_GET = (
    select(*_COLUMNS)
    .where(ServerRow.name == bindparam("name"), _seen_after(bindparam("live_after")))
    .order_by(ServerRow.registered_at.desc())
    .limit(1)
)


def _unseen_since(when: datetime) -> ColumnElement[bool]:
    return or_(
        ServerRow.seen_at < when, ServerRow.seen_at.is_(None) & (ServerRow.changed_at < when)
    )


class Registration:
    """A worker's registration for as long as it runs: stamped every `every` seconds by a
    daemon thread (a worker's event loop may be busy; the stamp must not wait for it), and
    withdrawn by `close()`."""

    def __init__(
        self,
        registry: ProfileRegistry,
        profiles: Iterable[Profile],
        every: float = HEARTBEAT_SECONDS,
        payload_keys: Iterable[str] | None = None,
        reach: Mapping[str, Reach | None] | None = None,
    ) -> None:
        self._registry = registry
        self._profiles = list(profiles)
        self._keys = None if payload_keys is None else list(payload_keys)
        self._reach = dict(reach or {})
        self.worker = registry.register(self._profiles, payload_keys=self._keys, reach=self._reach)
        self._stop = threading.Event()
        self._due = threading.Event()  # set by `renew` and `close`: the thread acts now
        self._lock = threading.Lock()
        self._unwritten = False  # a renewed reach not written yet
        self._thread = threading.Thread(
            target=self._beat, args=(every,), name="agentrt-registration", daemon=True
        )
        self._thread.start()

    def renew(self, reach: Mapping[str, Reach | None]) -> None:
        """What the profiles' tools may do is known better now (an MCP server listed its
        tools after the start): registered again at once, by the thread (the caller may
        be an event loop). The same reach again changes nothing."""
        with self._lock:
            if dict(reach) == self._reach:
                return
            self._reach, self._unwritten = dict(reach), True
        self._due.set()

    def _beat(self, every: float) -> None:
        while True:
            self._due.wait(every)
            if self._stop.is_set():
                return
            self._due.clear()
            with self._lock:
                reach, renewed = dict(self._reach), self._unwritten
            try:
                if renewed or (not self._registry.heartbeat(self.worker) and self._profiles):
                    self._registry.register(self._profiles, self.worker, self._keys, reach)
                    with self._lock:
                        self._unwritten = self._reach != reach  # renewed again meanwhile
            except Exception as exc:  # the database is away: again at the next beat
                log.warning("profile registration not renewed: %s", type(exc).__name__)

    def close(self) -> None:
        """Stop stamping and withdraw (once): the worker's profiles stop routing now."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._due.set()
        self._thread.join()
        try:
            self._registry.withdraw(self.worker)
        except Exception as exc:  # its rows go stale after STALE_AFTER instead
            log.warning("profile registration not withdrawn: %s", type(exc).__name__)
