"""a2a: task view, event journal, push configs and delivery records"""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import at, integer, serial, string, text
from agentrt.store.migrations._ddl import cascades_with, primary_key

revision, down_revision = "0003", "0002"
branch_labels = depends_on = None


def upgrade() -> None:
    _tasks()
    _events()
    _push()


def _tasks() -> None:
    op.create_table(
        "a2a_task",
        string("id", 64),
        string("context_id", 64),
        string("workflow_id", 36),
        string("run_id", 36, nullable=True),
        string("owner", 200),
        string("profile", 100),
        string("answer_level", 16),
        string("state", 40),
        text("artifacts", nullable=True),
        text("status_message", nullable=True),
        text("history"),
        text("task_metadata"),
        at("status_at"),
        integer("run_revision"),
        integer("journal_head"),
        string("projected_state", 40, nullable=True),
        string("projected_note", 64, nullable=True),
        at("created_at"),
        at("updated_at"),
        cascades_with("a2a_task", "run_id", "agent_run"),
        primary_key("a2a_task", "id"),
        sa.UniqueConstraint("run_id", name=op.f("uq_a2a_task_run_id")),
        sa.UniqueConstraint("workflow_id", name=op.f("uq_a2a_task_workflow_id")),
    )
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_a2a_task_context_id"), ["context_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_a2a_task_status_at"), ["status_at"], unique=False)
        batch_op.create_index(
            "ix_a2a_task_owner_status_at", ["owner", "status_at", "id"], unique=False
        )


def _events() -> None:
    op.create_table(
        "a2a_event",
        serial(),
        string("task_id", 64),
        integer("sequence"),
        integer("run_revision"),
        integer("slot"),
        string("kind", 32),
        string("state", 40),
        text("payload"),
        at("created_at"),
        cascades_with("a2a_event", "task_id", "a2a_task"),
        primary_key("a2a_event", "id"),
        sa.UniqueConstraint("task_id", "run_revision", "slot", name="uq_a2a_event_task_rev_slot"),
        sa.UniqueConstraint("task_id", "sequence", name="uq_a2a_event_task_seq"),
    )


def _push() -> None:
    op.create_table(
        "a2a_push_config",
        string("task_id", 64),
        string("id", 200),
        text("url"),
        text("token", nullable=True),
        string("auth_scheme", 50, nullable=True),
        text("auth_credentials", nullable=True),
        integer("delivered_through"),
        at("lease_until", nullable=True),
        at("created_at"),
        cascades_with("a2a_push_config", "task_id", "a2a_task"),
        primary_key("a2a_push_config", "task_id", "id"),
    )

    op.create_table(
        "a2a_push_delivery",
        serial(),
        string("task_id", 64),
        string("config_id", 200),
        integer("sequence"),
        integer("attempts"),
        string("status", 16),
        string("last_error", 200, nullable=True),
        at("next_attempt_at"),
        at("delivered_at", nullable=True),
        at("created_at"),
        sa.ForeignKeyConstraint(
            ["task_id", "config_id"],
            ["a2a_push_config.task_id", "a2a_push_config.id"],
            name="fk_a2a_push_delivery_config",
            ondelete="CASCADE",
        ),
        primary_key("a2a_push_delivery", "id"),
        sa.UniqueConstraint("task_id", "config_id", "sequence", name="uq_a2a_push_delivery_event"),
    )


def downgrade() -> None:
    op.drop_table("a2a_push_delivery")
    op.drop_table("a2a_push_config")
    op.drop_table("a2a_event")
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.drop_index("ix_a2a_task_owner_status_at")
        batch_op.drop_index(batch_op.f("ix_a2a_task_status_at"))
        batch_op.drop_index(batch_op.f("ix_a2a_task_context_id"))
    op.drop_table("a2a_task")
