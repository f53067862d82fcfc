"""approval: the pending turn on the run row, and when it started waiting"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0002", "0001"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pending_approval", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("waiting_since", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_agent_run_waiting_since"), ["waiting_since"])


def downgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_run_waiting_since"))
        batch_op.drop_column("waiting_since")
        batch_op.drop_column("pending_approval")
