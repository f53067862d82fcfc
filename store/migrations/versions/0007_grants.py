"""grants: the agent profiles an operator API token may start (names or glob patterns)

Revision ID: 0007
Revises: 0006

A token made before grants gets none: it may still read, decide and cancel as its scopes
say, but starts nothing until it is re-created with `--profile` (or holds `admin`).
"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0007", "0006"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_token", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("profiles", sa.String(length=2000), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("api_token", schema=None) as batch_op:
        batch_op.drop_column("profiles")
