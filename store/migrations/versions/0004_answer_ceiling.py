"""answer ceiling: the strictest answer level of the providers that answered a run"""

from alembic import op

from agentrt.store.migrations._columns import string

revision, down_revision = "0004", "0003"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.add_column(string("answer_ceiling", 16, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agent_run", schema=None) as batch_op:
        batch_op.drop_column("answer_ceiling")
