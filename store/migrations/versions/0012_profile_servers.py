"""agent_profile_server: each worker's registration of each profile it serves, with when it
last said so; it replaces agent_profile (one row per profile, kept forever)"""

from typing import Any

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import at, string
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0012", "0011"
branch_labels = depends_on = None

# What a registration says of a profile, in both tables, in their column order: after the
# worker (agent_profile_server only), before the times. Downgrade makes agent_profile
# again as 0010 made it.
_PROFILE: tuple[tuple[str, sa.types.TypeEngine[Any], bool], ...] = (
    # name, type, nullable
    ("name", sa.String(length=200), False),
    ("task_queue", sa.String(length=200), True),
    ("privacy", sa.String(length=16), False),
    ("answer_level", sa.String(length=16), False),
    ("writes_unapproved", sa.Boolean(), False),
    ("publish", sa.Boolean(), False),
    ("description", sa.Text(), False),
    ("digest", sa.String(length=64), False),
)


def _profile_columns() -> list[sa.Column[Any]]:
    return [sa.Column(name, kind, nullable=nullable) for name, kind, nullable in _PROFILE]


def upgrade() -> None:
    op.create_table(
        "agent_profile_server",
        string("worker", 64),
        *_profile_columns(),
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
        *_profile_columns(),
        at("changed_at"),
        primary_key("agent_profile", "name"),
    )
    op.drop_index("ix_agent_profile_server_name", table_name="agent_profile_server")
    op.drop_table("agent_profile_server")
