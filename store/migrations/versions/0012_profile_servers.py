"""agent_profile_server: each worker's registration of each profile it serves, with when it
last said so; it replaces agent_profile (one row per profile, kept forever)"""

from alembic import op

from agentrt.store.migrations._columns import at, registration, string
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0012", "0011"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile_server",
        string("worker", 64),
        *registration(),
        at("registered_at"),
        at("changed_at"),
        at("seen_at", nullable=True),
        primary_key("agent_profile_server", "worker", "name"),
    )
    op.create_index("ix_agent_profile_server_name", "agent_profile_server", ["name", "seen_at"])
    # Registrations made before this revision name no worker: each worker registers what
    # it serves again when it starts.
    op.drop_table("agent_profile")


def downgrade() -> None:
    op.create_table(
        "agent_profile",
        *registration(),
        at("changed_at"),
        primary_key("agent_profile", "name"),
    )
    op.drop_index("ix_agent_profile_server_name", table_name="agent_profile_server")
    op.drop_table("agent_profile_server")
