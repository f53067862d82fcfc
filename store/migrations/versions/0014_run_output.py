"""run.output: a typed answer's validated object (sealed like the answer)"""

from alembic import op

from agentrt.store.migrations._columns import text

revision, down_revision = "0014", "0013"
branch_labels = depends_on = None


def upgrade() -> None:
    op.add_column("agent_run", text("output", nullable=True))


def downgrade() -> None:
    op.drop_column("agent_run", "output")
