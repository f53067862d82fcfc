"""The profiles the workers serve, as they registered them at start: what clients, the API
and A2A read to route a start and to refuse one they cannot serve, instead of parsing the
workers' profiles file. A profile registered by no worker is unknown to them.

A worker upserts its profiles when it is built; a later worker with a changed profile
replaces the row (the digest tells the copies apart), the same one leaves it. A profile a
worker stops serving keeps its row: the worker still refuses its runs (UNKNOWN_PROFILE),
so a stale row only delays the same refusal to the workflow's begin."""

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import Boolean, DateTime, String, Text, func, select, update
from sqlalchemy.orm import Mapped, mapped_column

from agentrt.contracts.profiles import Profile, RegisteredProfile
from agentrt.store.context import StoreContext, as_utc, insert_ignoring, utcnow
from agentrt.store.rows import Base


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


class ProfileRegistry:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def register(self, profiles: Iterable[Profile]) -> None:
        """Upsert every profile's registration, in one transaction. Workers of a fleet
        start together: the insert yields to a row another worker wrote meanwhile, and
        the update then changes only a row whose digest differs."""
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

    def get(self, name: str) -> RegisteredProfile | None:
        with self._ctx.reads() as s:
            row = s.get(ProfileRow, name)
            return None if row is None else _registered(row)

    def changed_at(self) -> datetime | None:
        """When a registration last changed; None while no worker registered any."""
        with self._ctx.reads() as s:
            changed = as_utc(s.scalar(select(func.max(ProfileRow.changed_at))))
        # PostgreSQL answers in the session's zone: the same instant, said in UTC.
        return None if changed is None else changed.astimezone(UTC)

    def all(self) -> dict[str, RegisteredProfile]:
        with self._ctx.reads() as s:
            rows = s.scalars(select(ProfileRow).order_by(ProfileRow.name)).all()
            return {row.name: _registered(row) for row in rows}


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
