"""agent_profile: the profiles each worker serves, registered at its start"""

from alembic import op

from agentrt.store.migrations._columns import at, boolean, string, text
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0010", "0009"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_profile",
        string("name", 200),
        string("task_queue", 200, nullable=True),
        string("privacy", 16),
        string("answer_level", 16),
        boolean("writes_unapproved"),
        boolean("publish"),
        text("description"),
        string("digest", 64),
        at("changed_at"),
        primary_key("agent_profile", "name"),
    )


def downgrade() -> None:
    op.drop_table("agent_profile")
