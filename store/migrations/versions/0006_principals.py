"""principals: hashed operator API tokens with scopes; NOTIFY on committed events (PostgreSQL)"""

import sqlalchemy as sa
from alembic import op

from agentrt.store.migrations._columns import at, string
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0006", "0005"
branch_labels = depends_on = None

# A NOTIFY issued inside a transaction is delivered when (and only if) it commits: live
# followers wake on committed rows, never on rolled-back ones. SQLite followers poll.
_NOTIFIERS = {
    "agent_event": ("agentrt_notify_run_event", "agentrt_run_event", "run_id"),
    "a2a_event": ("agentrt_notify_a2a_event", "agentrt_a2a_event", "task_id"),
}


def upgrade() -> None:
    op.create_table(
        "api_token",
        string("id", 32),
        string("principal", 200),
        string("digest", 64),
        string("scopes", 500),
        string("label", 200, nullable=True),
        at("created_at"),
        at("expires_at", nullable=True),
        at("revoked_at", nullable=True),
        primary_key("api_token", "id"),
        sa.UniqueConstraint("digest", name=op.f("uq_api_token_digest")),
    )
    with op.batch_alter_table("api_token", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_token_principal"), ["principal"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        for table, (function, channel, column) in _NOTIFIERS.items():
            op.execute(
                f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                f"BEGIN PERFORM pg_notify('{channel}', NEW.{column}); RETURN NEW; END $$"
            )
            op.execute(
                f"CREATE TRIGGER {function} AFTER INSERT ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table, (function, _channel, _column) in _NOTIFIERS.items():
            op.execute(f"DROP TRIGGER IF EXISTS {function} ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    with op.batch_alter_table("api_token", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_token_principal"))
    op.drop_table("api_token")
