"""agent_run.parent_run_id: the run that delegated to this one (a child agent's run).

Each child run records its parent, so a run's view lists its children and a child's its
parent (contracts/agents.py). Runs stored before this revision have none: they are roots.
A plain ADD COLUMN and an index, as 0017: no batch, so SQLite rebuilds no table.
"""

from alembic import op

from agentrt.store.migrations._columns import string

revision, down_revision = "0019", "0018"
branch_labels = depends_on = None

_INDEX = "ix_agent_run_parent_run_id"


def upgrade() -> None:
    op.add_column("agent_run", string("parent_run_id", 36, nullable=True))
    op.create_index(_INDEX, "agent_run", ["parent_run_id"])


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="agent_run")
    op.drop_column("agent_run", "parent_run_id")
