"""agent_live: a model call's output while it is written, for live subscribers; pruned when
the turn is stored. On PostgreSQL its inserts NOTIFY the run's channel, as agent_event's do
(the function of migration 0006), so followers wake on a delta as on an event."""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import at, integer, serial, string, text
from agentrt.store.migrations._ddl import cascades_with, primary_key

revision, down_revision = "0013", "0012"
branch_labels = depends_on = None

_TRIGGER = "agentrt_notify_run_live"


def upgrade() -> None:
    op.create_table(
        "agent_live",
        serial(),
        string("run_id", 36),
        integer("sequence"),
        integer("attempt"),
        integer("offset"),
        string("kind", 16),
        text("text"),
        at("created_at"),
        cascades_with("agent_live", "run_id", "agent_run"),
        primary_key("agent_live", "id"),
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
