"""Principals of the operator API: a bearer token names one, with its scopes and the
profiles it may start (api/grants.py). `admin` holds every scope and may start anything."""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agentrt.api.grants import Grants
from agentrt.api.operator.errors import forbidden, unauthorized
from agentrt.store.security.principals import PrincipalStore, TokenInfo

READ, READ_ALL, START = "runs:read", "runs:read-all", "runs:start"
DECIDE, CANCEL, ADMIN = "runs:decide", "runs:cancel", "admin"
DECODE = "payloads:decode"  # Temporal Web's codec on this API (api/operator/codec.py)
# Record what the target system shows of a write whose outcome is unknown: for a run that
# waits for the answer, and for a run that ended without one.
RECONCILE, RESOLVE = "runs:reconcile", "runs:resolve"

# Schedules of runs (api/operator/schedules.py): read them, or create, pause, resume,
# trigger, backfill and delete them (manage includes read). A schedule that starts runs
# also needs runs:start and a grant of its profile.
SCHEDULES_READ, SCHEDULES_MANAGE = "schedules:read", "schedules:manage"

SCOPES = (
    READ, READ_ALL, START, DECIDE, CANCEL, RECONCILE, RESOLVE, DECODE,
    SCHEDULES_READ, SCHEDULES_MANAGE, ADMIN,
)  # fmt: skip

_bearer = HTTPBearer(auto_error=False, description="An operator API token (agentrt-api token)")


@dataclass(frozen=True)
class Principal:
    name: str
    scopes: frozenset[str]
    grants: Grants = field(default_factory=Grants)
    token_id: str = field(default="", repr=False)  # an open stream re-checks it

    def has(self, scope: str) -> bool:
        if scope == READ and READ_ALL in self.scopes:
            return True  # reading every run includes reading one's own
        if scope == SCHEDULES_READ and SCHEDULES_MANAGE in self.scopes:
            return True
        return ADMIN in self.scopes or scope in self.scopes

    def effective(self) -> list[str]:
        """Every scope this principal acts with (admin and runs:read-all imply others)."""
        return sorted(s for s in SCOPES if self.has(s))

    @property
    def visible_to(self) -> str | None:
        """None: sees every run; else only the runs this principal started."""
        return None if self.has(READ_ALL) else self.name


def principal_of(token: TokenInfo) -> Principal:
    """The principal a valid token names, with its scopes and grants."""
    grants = Grants.of(token.profiles, everything=ADMIN in token.scopes)
    return Principal(token.principal, token.scopes, grants, token.id)


def require(scope: str | None, *or_: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the token's principal, refused unless it holds `scope` or one of `or_`
    (None: any valid token). A route that takes several kinds of request (the answers)
    asks for any of their scopes here, and for the kind's own once the body names it."""

    async def principal(
        request: Request,
        creds: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    ) -> Principal:
        if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
            raise unauthorized("a bearer API token is required")
        ops = request.app.state.ops
        store: PrincipalStore = ops.principals
        secret = creds.credentials.strip()
        if scope == START:  # a start's reads never queue behind the follows' (state.py)
            began = time.perf_counter()
            token = await ops.on_start_lane(store.authenticate, secret)
            request.state.token_seconds = time.perf_counter() - began  # its Server-Timing
        else:
            token = await asyncio.to_thread(store.authenticate, secret)
        if token is None:
            raise unauthorized("the token is unknown, revoked or expired")
        who = principal_of(token)
        if scope is not None and not any(who.has(s) for s in (scope, *or_)):
            wanted = " or ".join((scope, *or_))
            raise forbidden(f"the token of {who.name} lacks the scope {wanted}")
        return who

    return principal


# The principal of a route's request, refused unless it holds the scope: each route takes
# it as a parameter of one of these types (FastAPI's `Annotated` dependencies).
Anyone = Annotated[Principal, Depends(require(None))]
Reader = Annotated[Principal, Depends(require(READ))]
Starter = Annotated[Principal, Depends(require(START))]
Canceller = Annotated[Principal, Depends(require(CANCEL))]
Decider = Annotated[Principal, Depends(require(DECIDE))]
Reconciler = Annotated[Principal, Depends(require(RECONCILE))]
Resolver = Annotated[Principal, Depends(require(RESOLVE))]
