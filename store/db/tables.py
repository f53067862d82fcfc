"""SQLAlchemy 2 typed rows. The same schema on SQLite and PostgreSQL (see migrations)."""

from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    Select,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    InstrumentedAttribute,
    Mapped,
    declared_attr,
    mapped_column,
)

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

S = TypeVar("S", bound=Select[Any])


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class RunRow(Base):
    __tablename__ = "agent_run"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    profile: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(32), index=True)
    outcome: Mapped[str | None] = mapped_column(String(40))
    termination_reason: Mapped[str | None] = mapped_column(String(40))
    error_type: Mapped[str | None] = mapped_column(String(100))
    iterations: Mapped[int] = mapped_column(Integer, default=0)
    truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # Set when the run settles; NULL while running and when any call's cost is unknown.
    cost_usd: Mapped[float | None] = mapped_column(Float)
    answer: Mapped[str | None] = mapped_column(Text)  # sealed
    output: Mapped[str | None] = mapped_column(Text)  # sealed JSON: a typed answer's object
    snapshot: Mapped[str] = mapped_column(Text)  # profile + tool specs as resolved at begin
    initiator: Mapped[str] = mapped_column(String(200), default="anonymous")
    pending_call_id: Mapped[str | None] = mapped_column(String(200))
    pending_tool: Mapped[str | None] = mapped_column(String(200))
    pending_token: Mapped[str | None] = mapped_column(String(64))
    pending_state: Mapped[str | None] = mapped_column(String(32))
    pending_approval: Mapped[str | None] = mapped_column(Text)  # sealed PendingApproval
    waiting_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    # Tightened (never loosened) when a stricter provider answers, e.g. a fallback.
    answer_ceiling: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revision: Mapped[int] = mapped_column(Integer, default=0)
    # A child run's parent (contracts/agents.py; migration 0019): the tree of runs.
    parent_run_id: Mapped[str | None] = mapped_column(String(36), index=True)


class RunSequenced:
    """A row in its run's own sequence: one per (run, sequence), gone with its run. Its
    columns come first in the table, as the migrations made them."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True, sort_order=-1)
    run_id: Mapped[str] = mapped_column(
        ForeignKey("agent_run.id", ondelete="CASCADE"), sort_order=-1
    )
    sequence: Mapped[int] = mapped_column(Integer, sort_order=-1)

    @declared_attr.directive
    def __table_args__(cls) -> tuple[UniqueConstraint]:
        name = f"uq_{cls.__tablename__}_run_seq"  # type: ignore[attr-defined]
        return (UniqueConstraint("run_id", "sequence", name=name),)


def in_sequence(query: S, sequence: InstrumentedAttribute[Any], after: int, limit: int) -> S:
    """`query`'s rows past `after` in `sequence`, in that order, at most `limit`: the next
    page of a journal (a run's events by position, an A2A task's by sequence) for a reader
    that has read `after`."""
    return query.where(sequence > after).order_by(sequence).limit(limit)


class EventRow(RunSequenced, Base):
    __tablename__ = "agent_event"

    kind: Mapped[str] = mapped_column(String(32))
    # The run's events in commit order (migration 0018: a trigger sets it as the inserting
    # transaction commits; NULL only inside that transaction). Followers page by it:
    # `sequence` is reserved before the write, so events commit out of its order.
    position: Mapped[int | None] = mapped_column(Integer)
    round: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float | None] = mapped_column(Float)
    payload: Mapped[str] = mapped_column(Text, default="{}")  # sealed JSON (migration 0008)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LiveRow(Base):
    """A model call's live output while it is written (migration 0013): pruned once its
    turn is stored. `id` is a reader's resume point; text is sealed."""

    __tablename__ = "agent_live"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("agent_run.id", ondelete="CASCADE"))
    sequence: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    offset: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint(
            "run_id", "sequence", "attempt", "offset", "kind", name="uq_agent_live_piece"
        ),
    )


class MessageRow(RunSequenced, Base):
    """The transcript, one row per message, in sequence order. Bodies are sealed."""

    __tablename__ = "agent_message"

    role: Mapped[str] = mapped_column(String(16))
    body: Mapped[str] = mapped_column(Text)


class ToolResultRow(Base):
    """Every executed tool call, keyed by its idempotency key: the dedup ledger."""

    __tablename__ = "tool_result"

    idempotency_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("agent_run.id", ondelete="CASCADE"), index=True)
    call_id: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(200))
    effect: Mapped[str] = mapped_column(String(32))
    is_error: Mapped[bool] = mapped_column(Boolean, default=False)
    content: Mapped[str] = mapped_column(Text)  # sealed
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DemoRecordRow(Base):
    """Demo world: key/value records (orders, settings) read and set by the demo tools."""

    __tablename__ = "demo_record"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DemoLedgerRow(Base):
    """Demo world: an append-only ledger; a row per executed non-idempotent write."""

    __tablename__ = "demo_ledger"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(36), index=True)
    call_id: Mapped[str] = mapped_column(String(200))
    account: Mapped[str] = mapped_column(String(200))
    amount_cents: Mapped[int] = mapped_column(Integer)
    memo: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
