"""a2a_push_config: dead letter (dead_at, dead_reason) for push delivery that gave up"""

from alembic import op

from agentrt.store.migrations._columns import at, string

revision, down_revision = "0009", "0008"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("a2a_push_config", schema=None) as batch_op:
        batch_op.add_column(at("dead_at", nullable=True))
        batch_op.add_column(string("dead_reason", 200, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("a2a_push_config", schema=None) as batch_op:
        batch_op.drop_column("dead_reason")
        batch_op.drop_column("dead_at")
