"""agent_profile: the profiles each worker serves, registered at its start"""

from alembic import op

from agentrt.store.migrations._columns import at, registration
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0010", "0009"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile",
        *registration(),
        at("changed_at"),
        primary_key("agent_profile", "name"),
    )


def downgrade() -> None:
    op.drop_table("agent_profile")
