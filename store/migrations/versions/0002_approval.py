"""approval: the pending turn on the run row, and when it started waiting"""

from alembic import op

from agentrt.store.migrations._columns import at, text

revision, down_revision = "0002", "0001"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.add_column(text("pending_approval", nullable=True))
        batch_op.add_column(at("waiting_since", nullable=True))
        batch_op.create_index(batch_op.f("ix_agent_run_waiting_since"), ["waiting_since"])


def downgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_run_waiting_since"))
        batch_op.drop_column("waiting_since")
        batch_op.drop_column("pending_approval")
