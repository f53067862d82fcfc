"""a2a_task: first_message_id, unique per owner, so a resent first message finds its task"""

from alembic import op

from agentrt.store.migrations._columns import string

revision, down_revision = "0011", "0010"
branch_labels = depends_on = None


def upgrade() -> None:
    # Nullable: tasks created before this revision have none, and NULLs never collide.
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.add_column(string("first_message_id", 200, nullable=True))
        batch_op.create_unique_constraint(
            "uq_a2a_task_owner_first_message", ["owner", "first_message_id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("a2a_task", schema=None) as batch_op:
        batch_op.drop_constraint("uq_a2a_task_owner_first_message", type_="unique")
        batch_op.drop_column("first_message_id")
