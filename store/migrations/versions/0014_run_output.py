"""run.output: a typed answer's validated object (sealed like the answer)"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0014", "0013"
branch_labels = depends_on = None


def upgrade() -> None:
    op.add_column("agent_run", sa.Column("output", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("agent_run", "output")
