"""`agentrt policies dry-run --policy FILE --profile P [--limit N]`: what a Cedar policy
set would have decided on a profile's past approval-bound turns, beside what was decided.
It reads the store (with the seal key, as the worker does) and changes nothing; a policy
that does not parse is refused with Cedar's reason, before the store is opened."""

import argparse
import asyncio
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agentrt.contracts.errors import ConfigError, InvalidRequestError
from agentrt.contracts.policy import parse_ref
from agentrt.core.policies import Asked, PolicyError, PolicySet, checked, judge
from agentrt.core.settings import Settings
from agentrt.starter.commands import EXIT_OK
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.approvals_past import PastTurn, past_turns


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    policies = sub.add_parser("policies", help="approval policies: try one on past runs")
    verbs = policies.add_subparsers(dest="policies_command", required=True, metavar="VERB")
    dry = verbs.add_parser(
        "dry-run", help="what a policy would have decided on a profile's past approvals"
    )
    dry.add_argument("--policy", required=True, type=Path, metavar="FILE", help="Cedar text")
    dry.add_argument("--profile", required=True, metavar="P", help="whose runs to judge")
    dry.add_argument("--limit", type=int, default=50, metavar="N", help="latest N runs (50)")
    dry.add_argument(
        "--name", default=None, metavar="NAME@VERSION",
        help="the policy's name and version as shown (default: FILE's stem@dry-run)",
    )  # fmt: skip


def _policy(args: argparse.Namespace) -> PolicySet:
    if args.limit < 1:
        raise InvalidRequestError("--limit must be at least 1")
    try:
        text = args.policy.read_text()
    except OSError as exc:
        raise ConfigError(f"policy file {args.policy}: {exc.strerror or exc}") from None
    try:
        name, version = parse_ref(args.name or f"{args.policy.stem}@dry-run")
    except ValueError as exc:
        raise InvalidRequestError(str(exc)) from None
    return checked(name, version, text)


def line(policy: PolicySet, turn: PastTurn, profile: str) -> str:
    """One past turn: what the policy would decide, and what was decided."""
    where = f"{turn.run_id} round {turn.round}"
    if turn.calls is None:
        return f"{where}: arguments not kept (privacy level): cannot judge; was {turn.decided}"
    tools = ", ".join(c.name for c in turn.calls) or "(none)"
    try:
        v = judge(policy, turn.calls, Asked(profile, turn.initiator, turn.spend))
    except PolicyError as exc:
        would = f"error ({exc}): would ask a person"
    else:
        would = {"allow": "allow", "deny": "deny"}.get(v.outcome, f"ask {v.approvers} person(s)")
    return f"{where} [{tools}] by {turn.initiator}: would {would}; was {turn.decided}"


async def dry_run(args: argparse.Namespace, settings: Settings, out: Console) -> int:
    policy = _policy(args)
    try:
        sealer = Sealer.from_b64(settings.read_seal_keys())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    url = settings.database.resolved_url()
    engine, ctx = await asyncio.to_thread(open_store, url, sealer, run_migrations=False)
    try:
        turns = await asyncio.to_thread(past_turns, ctx, args.profile, args.limit)
    finally:
        await asyncio.to_thread(engine.dispose)
    for turn in turns:
        judged = line(policy, turn, args.profile)
        out.print(Text(judged.replace(" by :", " by ?:")), soft_wrap=True)
    out.print(Text(f"{len(turns)} approval-bound turn(s) of {args.profile} judged by {policy.ref}"))
    return EXIT_OK
