"""a2a_push_config: dead letter (dead_at, dead_reason) for push delivery that gave up

Revision ID: 0009
Revises: 0008
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("a2a_push_config", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dead_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("dead_reason", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("a2a_push_config", schema=None) as batch_op:
        batch_op.drop_column("dead_reason")
        batch_op.drop_column("dead_at")
