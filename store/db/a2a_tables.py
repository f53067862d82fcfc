"""Rows of the A2A server role: the task view, its event journal, push configs, deliveries.

Sealed columns hold ProtoJSON (A2A 1.0) text: the client's messages, the agent's status
messages and the stored artifacts. Nothing here holds a prompt, a tool argument or raw
provider output.
"""

from datetime import datetime

from sqlalchemy import (
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from agentrt.store.db.tables import Base


class A2ATaskRow(Base):
    __tablename__ = "a2a_task"
    __table_args__ = (
        Index("ix_a2a_task_owner_status_at", "owner", "status_at", "id"),
        # A client resending the message that created a task gets that task, not a second
        # one: the database decides, so two concurrent resends cannot both insert.
        UniqueConstraint("owner", "first_message_id", name="uq_a2a_task_owner_first_message"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    context_id: Mapped[str] = mapped_column(String(64), index=True)
    # The run uuid reserved when the task was created (= the Temporal workflow id).
    workflow_id: Mapped[str] = mapped_column(String(36), unique=True)
    # The run, once it has begun: removing the run removes the task (and its journal).
    run_id: Mapped[str | None] = mapped_column(
        ForeignKey("agent_run.id", ondelete="CASCADE"), unique=True
    )
    owner: Mapped[str] = mapped_column(String(200))
    # The messageId of the message that created the task (None for tasks stored before
    # migration 0011, and for tasks made outside the A2A server).
    first_message_id: Mapped[str | None] = mapped_column(String(200))
    # Sealed: a digest of what that first message asked (its parts, metadata, push config),
    # so a resend that asks something else under the same messageId is told so (0017).
    first_message_digest: Mapped[str | None] = mapped_column(Text)
    profile: Mapped[str] = mapped_column(String(100))
    answer_level: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(40))
    artifacts: Mapped[str | None] = mapped_column(Text)  # sealed JSON list of Artifact
    status_message: Mapped[str | None] = mapped_column(Text)  # sealed JSON Message
    history: Mapped[str] = mapped_column(Text)  # sealed JSON list of Message
    task_metadata: Mapped[str] = mapped_column(Text, default="{}")  # never content
    status_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    run_revision: Mapped[int] = mapped_column(Integer, default=-1)  # last projected
    journal_head: Mapped[int] = mapped_column(Integer, default=-1)  # last journal sequence
    projected_state: Mapped[str | None] = mapped_column(String(40))
    projected_note: Mapped[str | None] = mapped_column(String(64))  # keyed digest of the note
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class A2AEventRow(Base):
    """The journal: what streams and push deliver, in per-task sequence order."""

    __tablename__ = "a2a_event"
    __table_args__ = (
        UniqueConstraint("task_id", "sequence", name="uq_a2a_event_task_seq"),
        # One revision of the run yields its events once, however often it is projected.
        UniqueConstraint("task_id", "run_revision", "slot", name="uq_a2a_event_task_rev_slot"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("a2a_task.id", ondelete="CASCADE"))
    sequence: Mapped[int] = mapped_column(Integer)
    run_revision: Mapped[int] = mapped_column(Integer)
    slot: Mapped[int] = mapped_column(Integer, default=0)
    kind: Mapped[str] = mapped_column(String(32))  # status | artifact
    state: Mapped[str] = mapped_column(String(40))  # the task state after this event
    payload: Mapped[str] = mapped_column(Text)  # sealed StreamResponse JSON
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class A2APushConfigRow(Base):
    __tablename__ = "a2a_push_config"

    task_id: Mapped[str] = mapped_column(
        ForeignKey("a2a_task.id", ondelete="CASCADE"), primary_key=True
    )
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    token: Mapped[str | None] = mapped_column(Text)  # sealed
    auth_scheme: Mapped[str | None] = mapped_column(String(50))
    auth_credentials: Mapped[str | None] = mapped_column(Text)  # sealed
    delivered_through: Mapped[int] = mapped_column(Integer, default=-1)  # journal cursor
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Dead letter: delivery gave up (bounded retries spent, or a target refused at delivery);
    # nothing more is sent until the client registers the config again.
    dead_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    dead_reason: Mapped[str | None] = mapped_column(String(200))


class A2APushDeliveryRow(Base):
    """One journal event to one push config: attempts, outcome, when."""

    __tablename__ = "a2a_push_delivery"
    __table_args__ = (
        ForeignKeyConstraint(
            ["task_id", "config_id"],
            ["a2a_push_config.task_id", "a2a_push_config.id"],
            ondelete="CASCADE",
            name="fk_a2a_push_delivery_config",
        ),
        UniqueConstraint("task_id", "config_id", "sequence", name="uq_a2a_push_delivery_event"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(String(64))
    config_id: Mapped[str] = mapped_column(String(200))
    sequence: Mapped[int] = mapped_column(Integer)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16))  # pending | delivered | failed | dead
    last_error: Mapped[str | None] = mapped_column(String(200))  # status code / error type
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
