"""codec_session: the sign-in codec's sessions, shared by every API replica (they lived in
one process); agent_profile_server.payload_keys: the payload key ids a registering worker
decrypts with ("" none, NULL registered before this revision), so a client whose payloads
those workers cannot read is refused before it starts a run"""

from alembic import op

from agentrt.store.migrations._columns import at, string
from agentrt.store.migrations._ddl import primary_key

revision, down_revision = "0015", "0014"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "codec_session",
        string("id", 64),
        string("token_id", 32),
        string("principal", 200),
        at("created_at"),
        at("expires_at"),
        at("ended_at", nullable=True),
        primary_key("codec_session", "id"),
    )
    op.create_index("ix_codec_session_expires_at", "codec_session", ["expires_at"])
    op.add_column("agent_profile_server", string("payload_keys", 500, nullable=True))


def downgrade() -> None:
    op.drop_column("agent_profile_server", "payload_keys")
    op.drop_index("ix_codec_session_expires_at", table_name="codec_session")
    op.drop_table("codec_session")
