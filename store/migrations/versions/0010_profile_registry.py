"""agent_profile: the profiles each worker serves, registered at its start"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0010", "0009"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("task_queue", sa.String(length=200), nullable=True),
        sa.Column("privacy", sa.String(length=16), nullable=False),
        sa.Column("answer_level", sa.String(length=16), nullable=False),
        sa.Column("writes_unapproved", sa.Boolean(), nullable=False),
        sa.Column("publish", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_agent_profile")),
    )


def downgrade() -> None:
    op.drop_table("agent_profile")
