"""agent_profile_server.reach and .output_schema: what a registered profile's tools may do
and its typed answer's schema, for the MCP server's tool annotations and output schemas
(api/mcp/). Both nullable: a row of an earlier build says neither (read as "writes", and a
text answer)."""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import string

revision, down_revision = "0020", "0019"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_profile_server") as batch:
        batch.add_column(string("reach", 16, nullable=True))
        batch.add_column(sa.Column("output_schema", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agent_profile_server") as batch:
        batch.drop_column("output_schema")
        batch.drop_column("reach")
