"""agent_live: a model call's output while it is written, for live subscribers; pruned when
the turn is stored. On PostgreSQL its inserts NOTIFY the run's channel, as agent_event's do
(the function of migration 0006), so followers wake on a delta as on an event."""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._ddl import cascades_with

revision, down_revision = "0013", "0012"
branch_labels = depends_on = None

_TRIGGER = "agentrt_notify_run_live"


def upgrade() -> None:
    op.create_table(
        "agent_live",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("offset", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        cascades_with("agent_live", "run_id", "agent_run"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_live")),
        sa.UniqueConstraint(
            "run_id", "sequence", "attempt", "offset", "kind", name="uq_agent_live_piece"
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE TRIGGER {_TRIGGER} AFTER INSERT ON agent_live "
            "FOR EACH ROW EXECUTE FUNCTION agentrt_notify_run_event()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER} ON agent_live")
    op.drop_table("agent_live")
