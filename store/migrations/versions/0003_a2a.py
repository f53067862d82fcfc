"""a2a: task view, event journal, push configs and delivery records"""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._ddl import cascades_with

revision, down_revision = "0003", "0002"
branch_labels = depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "a2a_task",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("context_id", sa.String(length=64), nullable=False),
        sa.Column("workflow_id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=True),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("profile", sa.String(length=100), nullable=False),
        sa.Column("answer_level", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=40), nullable=False),
        sa.Column("artifacts", sa.Text(), nullable=True),
        sa.Column("status_message", sa.Text(), nullable=True),
        sa.Column("history", sa.Text(), nullable=False),
        sa.Column("task_metadata", sa.Text(), nullable=False),
        sa.Column("status_at", TS, nullable=False),
        sa.Column("run_revision", sa.Integer(), nullable=False),
        sa.Column("journal_head", sa.Integer(), nullable=False),
        sa.Column("projected_state", sa.String(length=40), nullable=True),
        sa.Column("projected_note", sa.String(length=64), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        cascades_with("a2a_task", "run_id", "agent_run"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_a2a_task")),
        sa.UniqueConstraint("run_id", name=op.f("uq_a2a_task_run_id")),
        sa.UniqueConstraint("workflow_id", name=op.f("uq_a2a_task_workflow_id")),
    )
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_a2a_task_context_id"), ["context_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_a2a_task_status_at"), ["status_at"], unique=False)
        batch_op.create_index(
            "ix_a2a_task_owner_status_at", ["owner", "status_at", "id"], unique=False
        )

    op.create_table(
        "a2a_event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("task_id", sa.String(length=64), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("run_revision", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=40), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        cascades_with("a2a_event", "task_id", "a2a_task"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_a2a_event")),
        sa.UniqueConstraint("task_id", "run_revision", "slot", name="uq_a2a_event_task_rev_slot"),
        sa.UniqueConstraint("task_id", "sequence", name="uq_a2a_event_task_seq"),
    )

    op.create_table(
        "a2a_push_config",
        sa.Column("task_id", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("token", sa.Text(), nullable=True),
        sa.Column("auth_scheme", sa.String(length=50), nullable=True),
        sa.Column("auth_credentials", sa.Text(), nullable=True),
        sa.Column("delivered_through", sa.Integer(), nullable=False),
        sa.Column("lease_until", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        cascades_with("a2a_push_config", "task_id", "a2a_task"),
        sa.PrimaryKeyConstraint("task_id", "id", name=op.f("pk_a2a_push_config")),
    )

    op.create_table(
        "a2a_push_delivery",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("task_id", sa.String(length=64), nullable=False),
        sa.Column("config_id", sa.String(length=200), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("delivered_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["task_id", "config_id"],
            ["a2a_push_config.task_id", "a2a_push_config.id"],
            name="fk_a2a_push_delivery_config",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_a2a_push_delivery")),
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
