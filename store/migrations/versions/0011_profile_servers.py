"""agent_profile_server: which worker serves which profile, and when it last said so"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0011", "0010"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile_server",
        sa.Column("worker", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("worker", "name", name=op.f("pk_agent_profile_server")),
    )
    op.create_index(
        op.f("ix_agent_profile_server_name"), "agent_profile_server", ["name", "seen_at"]
    )
    # Registrations made before this revision name no worker: none is routable any more
    # until a worker (re)starts and registers what it serves.


def downgrade() -> None:
    op.drop_index(op.f("ix_agent_profile_server_name"), table_name="agent_profile_server")
    op.drop_table("agent_profile_server")
