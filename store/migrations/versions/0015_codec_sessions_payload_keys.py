"""codec_session: the sign-in codec's sessions, shared by every API replica (they lived in
one process); agent_profile_server.payload_keys: the payload key ids a registering worker
decrypts with ("" none, NULL registered before this revision), so a client whose payloads
those workers cannot read is refused before it starts a run"""

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0015", "0014"
branch_labels = depends_on = None


def upgrade() -> None:
    op.create_table(
        "codec_session",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=False),
        sa.Column("principal", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_codec_session")),
    )
    op.create_index("ix_codec_session_expires_at", "codec_session", ["expires_at"])
    op.add_column(
        "agent_profile_server", sa.Column("payload_keys", sa.String(length=500), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("agent_profile_server", "payload_keys")
    op.drop_index("ix_codec_session_expires_at", table_name="codec_session")
    op.drop_table("codec_session")
