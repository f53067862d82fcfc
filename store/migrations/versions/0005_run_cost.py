"""run cost: the summed cost of a run's model calls in USD (NULL when any call's is unknown)"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0005", "0004"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cost_usd", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.drop_column("cost_usd")
