"""The sign-in codec's sessions (api/operator/codec.py), in the database so that every API
replica knows them: behind a load balancer a browser's next decode reaches any replica,
and a sign-out on one ends the session on all.

The cookie carries a random secret; the row holds only its SHA-256 digest (like the API
tokens), the token it was opened with, its principal and when it ends. A session is good
while it has not ended, not expired, and its token is still active (the token's own row
is read with it, so revoking the token ends every session opened with it, at once)."""

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import DateTime, String, delete, select, update
from sqlalchemy.orm import Mapped, mapped_column

from agentrt.store.db.context import StoreContext, as_utc, rowcount, utcnow
from agentrt.store.db.tables import Base
from agentrt.store.security.principals import TokenInfo, TokenRow, token_info

# Rows of ended or expired sessions go once they are this old (swept when one is opened).
KEEP_ENDED = timedelta(days=1)


class CodecSessionRow(Base):
    __tablename__ = "codec_session"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # SHA-256 of the secret
    token_id: Mapped[str] = mapped_column(String(32))
    principal: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class CodecSessions:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def open(self, token: TokenInfo, lifetime: timedelta) -> str:
        """A new session for `token`'s principal, ending after `lifetime`; returns the
        cookie's secret (shown once, never stored)."""
        secret = secrets.token_urlsafe(32)
        now = utcnow()
        with self._ctx.sessions.begin() as s:
            s.execute(delete(CodecSessionRow).where(CodecSessionRow.expires_at < now - KEEP_ENDED))
            s.add(
                CodecSessionRow(
                    id=_digest(secret),
                    token_id=token.id,
                    principal=token.principal,
                    created_at=now,
                    expires_at=now + lifetime,
                )
            )
        return secret

    def token(self, secret: str) -> TokenInfo | None:
        """The token of a good session (not ended, not expired, its token active), read
        fresh: its scopes and grants as they are now. None otherwise."""
        now = utcnow()
        q = (
            select(TokenRow, CodecSessionRow.expires_at, CodecSessionRow.ended_at)
            .join(TokenRow, TokenRow.id == CodecSessionRow.token_id)
            .where(CodecSessionRow.id == _digest(secret))
        )
        with self._ctx.reads() as s:
            found = s.execute(q).first()
        if found is None:
            return None
        row, expires, ended = found
        info = token_info(row)
        expiry = as_utc(expires)
        if ended is not None or expiry is None or expiry <= now or not info.active(now):
            return None
        return info

    def end(self, secret: str) -> bool:
        """Sign-out: the session ends for every replica. False if there was none to end."""
        with self._ctx.sessions.begin() as s:
            done = s.execute(
                update(CodecSessionRow)
                .where(CodecSessionRow.id == _digest(secret), CodecSessionRow.ended_at.is_(None))
                .values(ended_at=utcnow())
            )
        return rowcount(done) > 0
