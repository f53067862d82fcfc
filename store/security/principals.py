"""Operator API tokens: each bound to a principal, its scopes and the agent profiles it may
start (names or glob patterns), stored only as a SHA-256 digest (like the A2A keys). The
secret is shown once, at creation."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import DateTime, String, select, update
from sqlalchemy.orm import Mapped, mapped_column

from agentrt.contracts.errors import InvalidRequestError
from agentrt.store.db.context import StoreContext, as_utc, rowcount, utcnow
from agentrt.store.db.tables import Base

SCOPES = frozenset(
    {
        "runs:start",
        "runs:read",
        "runs:read-all",
        "runs:decide",
        "runs:cancel",
        "payloads:decode",
        "runs:reconcile",
        "runs:resolve",
        "schedules:read",
        "schedules:manage",
        "admin",
    }
)
TOKEN_PREFIX = "agrt_"


class TokenRow(Base):
    __tablename__ = "api_token"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    principal: Mapped[str] = mapped_column(String(200), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[str] = mapped_column(String(500))  # space-separated
    # Profile names or glob patterns, space-separated; "" (tokens made before grants): none.
    profiles: Mapped[str] = mapped_column(String(2000), default="", server_default="")
    label: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class TokenInfo:
    id: str
    principal: str
    scopes: frozenset[str]
    profiles: frozenset[str]
    label: str | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    def active(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_info(row: TokenRow) -> TokenInfo:
    created = as_utc(row.created_at)
    assert created is not None
    return TokenInfo(
        id=row.id,
        principal=row.principal,
        scopes=frozenset(row.scopes.split()),
        profiles=frozenset((row.profiles or "").split()),
        label=row.label,
        created_at=created,
        expires_at=as_utc(row.expires_at),
        revoked_at=as_utc(row.revoked_at),
    )


def checked_scopes(scopes: list[str]) -> frozenset[str]:
    unknown = sorted(set(scopes) - SCOPES)
    if unknown:
        raise InvalidRequestError(
            f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(sorted(SCOPES))}"
        )
    if not scopes:
        raise InvalidRequestError("name at least one scope")
    return frozenset(scopes)


def checked_profiles(patterns: list[str]) -> frozenset[str]:
    """Profile names or glob patterns (`billing-*`); each 1 to 200 characters, no spaces."""
    for p in patterns:
        if not p or len(p) > 200 or any(c.isspace() for c in p):
            raise InvalidRequestError(f"a profile grant is 1 to 200 characters, no spaces: {p!r}")
    wanted = frozenset(patterns)
    if len(" ".join(sorted(wanted))) > 2000:
        raise InvalidRequestError("the profile grants are too long together (2000 characters)")
    return wanted


class PrincipalStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def create(
        self,
        principal: str,
        scopes: list[str],
        *,
        profiles: list[str] | None = None,
        expires_at: datetime | None = None,
        label: str | None = None,
    ) -> tuple[TokenInfo, str]:
        """A new token; returns its record and the secret (never stored, never shown again).
        `profiles`: what it may start (None or empty: nothing, unless it holds admin)."""
        name = principal.strip()
        if not name or len(name) > 200 or any(c.isspace() for c in name) or ":" in name:
            raise InvalidRequestError("a principal is 1 to 200 characters, no spaces or ':'")
        wanted = checked_scopes(scopes)
        granted = checked_profiles(profiles or [])
        if expires_at is not None and as_utc(expires_at) <= utcnow():  # type: ignore[operator]
            raise InvalidRequestError("the expiry is in the past")
        token_id = secrets.token_hex(8)
        secret = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        row = TokenRow(
            id=token_id,
            principal=name,
            digest=token_digest(secret),
            scopes=" ".join(sorted(wanted)),
            profiles=" ".join(sorted(granted)),
            label=label,
            created_at=utcnow(),
            expires_at=expires_at,
        )
        with self._ctx.sessions.begin() as s:
            s.add(row)
        return token_info(row), secret

    def authenticate(self, secret: str) -> TokenInfo | None:
        """The active token a presented secret is, or None (unknown, revoked or expired)."""
        if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            return None
        with self._ctx.reads() as s:
            row = s.scalar(select(TokenRow).where(TokenRow.digest == token_digest(secret)))
        if row is None:
            return None
        info = token_info(row)
        return info if info.active(utcnow()) else None

    def active(self, token_id: str) -> bool:
        """Whether the token is still usable (not revoked, not expired): open streams ask."""
        with self._ctx.reads() as s:
            row = s.get(TokenRow, token_id)
        return row is not None and token_info(row).active(utcnow())

    def list(self, principal: str | None = None) -> list[TokenInfo]:
        q = select(TokenRow).order_by(TokenRow.created_at, TokenRow.id)
        if principal is not None:
            q = q.where(TokenRow.principal == principal)
        with self._ctx.reads() as s:
            return [token_info(r) for r in s.scalars(q).all()]

    def revoke(self, token_id: str) -> bool:
        """Revoke a token; False if there is no such active token (nothing changes)."""
        with self._ctx.sessions.begin() as s:
            res = s.execute(
                update(TokenRow)
                .where(TokenRow.id == token_id, TokenRow.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )
            return rowcount(res) > 0
