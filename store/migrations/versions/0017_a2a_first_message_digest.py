"""a2a_task.first_message_digest: a sealed digest of what the task's first message asked

A resend of a first message (same caller, same messageId) gets the first task back; one
whose parts, metadata or push config differ is refused, where before the difference was
dropped in silence. Tasks stored before this revision have none: a resend of theirs is
answered with the task, as before.

A plain ADD / DROP COLUMN, not a batch: on SQLite a batch rebuilds the table, and dropping
the old a2a_task (foreign keys on) would cascade to every task's journal and push configs.
"""

from alembic import op

from agentrt.store.migrations._columns import text

revision, down_revision = "0017", "0016"
branch_labels = depends_on = None


def upgrade() -> None:
    op.add_column("a2a_task", text("first_message_digest", nullable=True))


def downgrade() -> None:
    op.drop_column("a2a_task", "first_message_digest")
