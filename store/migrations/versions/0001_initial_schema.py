"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 21:59:43.809344
"""

import datetime as _dt

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import at, boolean, integer, serial, string, text
from agentrt.store.migrations._ddl import cascades_with, primary_key

revision, down_revision = "0001", None
branch_labels = depends_on = None


def upgrade() -> None:
    _runs()
    _demo_world()
    _transcript()
    _tool_results()
    _seed_demo_world()


def _runs() -> None:
    op.create_table(
        "agent_run",
        string("id", 36),
        string("profile", 100),
        string("status", 32),
        string("outcome", 40, nullable=True),
        string("termination_reason", 40, nullable=True),
        string("error_type", 100, nullable=True),
        integer("iterations"),
        boolean("truncated"),
        integer("prompt_tokens"),
        integer("completion_tokens"),
        text("answer", nullable=True),
        text("snapshot"),
        string("initiator", 200),
        string("pending_call_id", 200, nullable=True),
        string("pending_tool", 200, nullable=True),
        string("pending_token", 64, nullable=True),
        string("pending_state", 32, nullable=True),
        at("created_at"),
        at("updated_at"),
        at("finished_at", nullable=True),
        integer("revision"),
        primary_key("agent_run", "id"),
    )
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agent_run_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_agent_run_status"), ["status"], unique=False)


def _demo_world() -> None:
    op.create_table(
        "demo_ledger",
        serial(),
        string("run_id", 36),
        string("call_id", 200),
        string("account", 200),
        integer("amount_cents"),
        text("memo"),
        at("created_at"),
        primary_key("demo_ledger", "id"),
    )
    with op.batch_alter_table("demo_ledger", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_demo_ledger_run_id"), ["run_id"], unique=False)

    op.create_table(
        "demo_record",
        string("key", 200),
        text("value"),
        at("updated_at"),
        primary_key("demo_record", "key"),
    )


def _transcript() -> None:
    op.create_table(
        "agent_event",
        serial(),
        string("run_id", 36),
        integer("sequence"),
        string("kind", 32),
        integer("round"),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        text("payload"),
        at("created_at"),
        cascades_with("agent_event", "run_id", "agent_run"),
        primary_key("agent_event", "id"),
        sa.UniqueConstraint("run_id", "sequence", name="uq_agent_event_run_seq"),
    )
    op.create_table(
        "agent_message",
        serial(),
        string("run_id", 36),
        integer("sequence"),
        string("role", 16),
        text("body"),
        cascades_with("agent_message", "run_id", "agent_run"),
        primary_key("agent_message", "id"),
        sa.UniqueConstraint("run_id", "sequence", name="uq_agent_message_run_seq"),
    )


def _tool_results() -> None:
    op.create_table(
        "tool_result",
        string("idempotency_key", 300),
        string("run_id", 36),
        string("call_id", 200),
        string("tool", 200),
        string("effect", 32),
        boolean("is_error"),
        text("content"),
        at("created_at"),
        cascades_with("tool_result", "run_id", "agent_run"),
        primary_key("tool_result", "idempotency_key"),
    )
    with op.batch_alter_table("tool_result", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tool_result_run_id"), ["run_id"], unique=False)


def _seed_demo_world() -> None:
    """The demo world the shipped tools act on."""
    records = sa.table(
        "demo_record",
        sa.column("key", sa.String),
        sa.column("value", sa.Text),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    seeded = _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC)
    op.bulk_insert(
        records,
        [
            {
                "key": "order:1042",
                "updated_at": seeded,
                "value": '{"order_id": "1042", "customer": "ACME-7", "total_cents": 4999, "status": "delivered"}',
            },
            {
                "key": "order:1043",
                "updated_at": seeded,
                "value": '{"order_id": "1043", "customer": "ACME-9", "total_cents": 1250, "status": "shipped"}',
            },
            {
                "key": "customer:ACME-7",
                "updated_at": seeded,
                "value": '{"name": "ACME Seven Ltd", "tier": "gold"}',
            },
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("tool_result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tool_result_run_id"))

    op.drop_table("tool_result")
    op.drop_table("agent_message")
    op.drop_table("agent_event")
    op.drop_table("demo_record")
    with op.batch_alter_table("demo_ledger", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_demo_ledger_run_id"))

    op.drop_table("demo_ledger")
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_run_status"))
        batch_op.drop_index(batch_op.f("ix_agent_run_created_at"))

    op.drop_table("agent_run")
