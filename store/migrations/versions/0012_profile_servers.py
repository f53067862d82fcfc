"""agent_profile_server: each worker's registration of each profile it serves, with when it
last said so; it replaces agent_profile (one row per profile, kept forever)"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0012", "0011"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile_server",
        sa.Column("worker", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("task_queue", sa.String(length=200), nullable=True),
        sa.Column("privacy", sa.String(length=16), nullable=False),
        sa.Column("answer_level", sa.String(length=16), nullable=False),
        sa.Column("writes_unapproved", sa.Boolean(), nullable=False),
        sa.Column("publish", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("worker", "name", name=op.f("pk_agent_profile_server")),
    )
    op.create_index("ix_agent_profile_server_name", "agent_profile_server", ["name", "seen_at"])
    # Registrations made before this revision name no worker: each worker registers what
    # it serves again when it starts.
    op.drop_table("agent_profile")


def downgrade() -> None:
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
    op.drop_index("ix_agent_profile_server_name", table_name="agent_profile_server")
    op.drop_table("agent_profile_server")
