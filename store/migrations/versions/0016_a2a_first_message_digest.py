"""a2a_task.first_message_digest: a sealed digest of what the task's first message asked

A resend of a first message (same caller, same messageId) gets the first task back; one
whose parts, metadata or push config differ is refused, where before the difference was
dropped in silence. Tasks stored before this revision have none: a resend of theirs is
answered with the task, as before."""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0016", "0015"
branch_labels = depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.add_column(sa.Column("first_message_digest", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.drop_column("first_message_digest")
