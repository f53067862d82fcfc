"""`agentrt reconcile RUN_ID ANSWER`: say what the target system shows of the write a run
waits on (AWAITING_RECONCILIATION). The call and fence default to the run's pending write
as it is now; `--fence` pins the one the operator looked at, so an answer meant for an
earlier fence is refused as stale.

On a run that ENDED with its write's outcome unknown (FAILED interrupted_write), `applied`
or `not-applied` with `--reason` (the audited note) records what the target system showed
(`resolve`: nothing runs again; the run leaves "Needs attention"); anything else says what
to do, naming the write and its idempotency key."""

import argparse
from typing import get_args

from agentrt.contracts.enums import PendingState
from agentrt.contracts.errors import (
    InvalidRequestError,
    NothingToResolveError,
    RunNotAwaitingReconciliationError,
)
from agentrt.contracts.reconcile_answer import Answer, Resolved, Then
from agentrt.contracts.views import RunView
from agentrt.starter.commands import EXIT_OK, Commands, run_id_arg
from agentrt.starter.remote import ApiRuntime

ANSWERS: dict[str, Answer] = {a.replace("_", "-"): a for a in get_args(Answer)}
RESOLVED: dict[str, Resolved] = {a.replace("_", "-"): a for a in get_args(Resolved)}


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    r = sub.add_parser(
        "reconcile", help="answer for a write whose outcome is unknown (a waiting run)"
    )
    r.add_argument("run_id", metavar="RUN_ID", help="the run waiting for an answer")
    r.add_argument("answer", choices=sorted(ANSWERS), help="what the target system shows")
    r.add_argument(
        "--result",
        default=None,
        metavar="TEXT",
        help="applied: the result the model sees; not-applied --then error: the error text",
    )
    r.add_argument(
        "--then",
        default="retry",
        choices=get_args(Then),
        help="not-applied: retry the write, or give the model an error result",
    )
    r.add_argument("--fence", default=None, metavar="F", help="the fence (default: current)")
    r.add_argument("--by", default=None, metavar="NAME", help="who answers (not with --api)")
    r.add_argument(
        "--reason", default=None, metavar="R",
        help="why (kept in the audit event); on a run that ended: required, the note",
    )  # fmt: skip


async def reconcile(cmd: Commands, args: argparse.Namespace) -> int:
    run_id = run_id_arg(args.run_id)
    current = await cmd.runtime.status(run_id)
    write = current.pending_effect
    if current.status.terminal:
        return await _resolve(cmd, args, current)
    if write is None or write.fence is None:
        raise RunNotAwaitingReconciliationError(
            f"run {run_id} has no write waiting for an answer (it is {current.status.value})"
        )
    by, answer = cmd.actor(args), ANSWERS[args.answer]
    view = await cmd.runtime.reconcile(
        run_id, call_id=write.call_id, fence=args.fence or write.fence, answer=answer,
        answered_by=by, result=args.result, then=args.then, reason=args.reason,
    )  # fmt: skip
    cmd.out.print(
        f"answered {args.answer} on write {write.tool} (call {write.call_id}) of run {run_id} "
        f"as {_acted(cmd, by)}; the run is {view.status.value}",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
    return EXIT_OK


async def _resolve(cmd: Commands, args: argparse.Namespace, current: RunView) -> int:
    """An ended run: its write's outcome, if it is still unknown, is recorded (with the
    reason as the audited note); anything else says what to do instead."""
    run_id, write, status = current.run_id, current.pending_effect, current.status.value
    if write is None or write.fence is None or write.state is PendingState.STAMPED:
        raise NothingToResolveError(
            f"run {run_id} is {status} and holds no write whose outcome is unknown: there "
            f"is nothing to reconcile (its events say how it ended: agentrt events {run_id})"
        )
    known = ("applied", "not-applied")
    ask = (
        f"run {run_id} is {status}; the outcome of its write {write.tool} (call "
        f"{write.call_id}) is unknown. Ask the target system about idempotency key "
        f"{write.idempotency_key}, then record what it shows: agentrt reconcile {run_id} "
        f"applied|not-applied --reason 'what you checked'"
    )
    if args.answer not in known:
        raise InvalidRequestError(f"{ask} (the run has ended: there is nothing to give up)")
    if not args.reason:
        raise InvalidRequestError(f"{ask} (--reason is the audited note: required)")
    by, outcome = cmd.actor(args), RESOLVED[args.answer]
    view = await cmd.runtime.resolve(
        run_id, call_id=write.call_id, fence=args.fence or write.fence, outcome=outcome,
        resolved_by=by, note=args.reason,
    )  # fmt: skip
    cmd.out.print(
        f"recorded {args.answer} for write {write.tool} (call {write.call_id}) of run "
        f"{run_id} as {_acted(cmd, by)}; the run stays {view.status.value} and no longer "
        "needs attention",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
    return EXIT_OK


def _acted(cmd: Commands, by: str) -> str:
    """Who acted: through the API, the token's principal as the API named it."""
    if isinstance(cmd.runtime, ApiRuntime) and cmd.runtime.acted_as:
        return cmd.runtime.acted_as
    return by
