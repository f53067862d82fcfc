"""`agentrt-api token create|list|revoke`: manage operator API tokens in the database."""

import argparse
import sys
from datetime import timedelta

from agentrt.api.settings import ApiSettings
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import SCOPES, PrincipalStore


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    token = sub.add_parser("token", help="create, list or revoke operator API tokens")
    verbs = token.add_subparsers(dest="verb", required=True)
    create = verbs.add_parser("create", help="create a token and print it once")
    create.add_argument("--principal", required=True, help="who the token acts as")
    create.add_argument(
        "--scope", action="append", required=True, choices=sorted(SCOPES), dest="scopes",
        help="what it may do; repeatable",
    )  # fmt: skip
    create.add_argument(
        "--profile",
        action="append",
        default=[],
        dest="profiles",
        help="a profile it may start, by name or glob pattern ('billing-*'); repeatable. "
        "A profile that writes without approval is covered only by its exact name",
    )
    create.add_argument("--expires-in-days", type=float, default=None,
                        help="the token stops working after this (default: never)")  # fmt: skip
    create.add_argument("--label", default=None, help="a note shown by `token list`")
    listing = verbs.add_parser("list", help="list tokens (never their secrets)")
    listing.add_argument("--principal", default=None, help="only this principal's tokens")
    revoke = verbs.add_parser("revoke", help="revoke a token by its id")
    revoke.add_argument("token_id", help="the id `token create` or `token list` printed")


def run(settings: ApiSettings, args: argparse.Namespace) -> int:
    engine, ctx = open_store(
        settings.database.resolved_url(), Sealer.from_b64(settings.read_seal_keys())
    )
    store = PrincipalStore(ctx)
    try:
        if args.verb == "create":
            days = args.expires_in_days
            if days is not None and days <= 0:
                raise AgentRuntimeError("--expires-in-days must be positive")
            expires = utcnow() + timedelta(days=days) if days is not None else None
            info, secret = store.create(
                args.principal,
                args.scopes,
                profiles=args.profiles,
                expires_at=expires,
                label=args.label,
            )
            may_start = " ".join(sorted(info.profiles)) or "no profile"
            sys.stderr.write(
                f"token {info.id} for {info.principal} ({' '.join(sorted(info.scopes))}; "
                f"may start: {may_start}); shown once, store it now:\n"
            )
            sys.stdout.write(secret + "\n")
        elif args.verb == "list":
            now = utcnow()
            for t in store.list(args.principal):
                state = "active" if t.active(now) else ("revoked" if t.revoked_at else "expired")
                expiry = t.expires_at.isoformat(timespec="seconds") if t.expires_at else "never"
                sys.stdout.write(
                    f"{t.id}\t{t.principal}\t{' '.join(sorted(t.scopes))}\t"
                    f"profiles {','.join(sorted(t.profiles)) or '-'}\t{state}\t"
                    f"expires {expiry}\t{t.label or ''}\n"
                )
        elif args.verb == "revoke":
            if not store.revoke(args.token_id):
                raise AgentRuntimeError(f"no active token {args.token_id}")
            sys.stdout.write(f"revoked {args.token_id}\n")
    except AgentRuntimeError as exc:
        sys.stderr.write(f"agentrt-api: {exc}\n")
        return 2
    finally:
        engine.dispose()
    return 0
