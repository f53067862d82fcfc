"""`agentrt reconcile RUN_ID ANSWER`: say what the target system shows of the write a run
waits on (AWAITING_RECONCILIATION). The call and fence default to the run's pending write
as it is now; `--fence` pins the one the operator looked at, so an answer meant for an
earlier fence is refused as stale."""

import argparse
from typing import get_args

from agentrt.contracts.errors import RunNotAwaitingReconciliationError
from agentrt.contracts.reconcile_answer import Answer, Then
from agentrt.starter.commands import EXIT_OK, Commands, run_id_arg
from agentrt.starter.remote import ApiRuntime

ANSWERS: dict[str, Answer] = {a.replace("_", "-"): a for a in get_args(Answer)}


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
    r.add_argument("--reason", default=None, metavar="R", help="why (kept in the audit event)")


async def reconcile(cmd: Commands, args: argparse.Namespace) -> int:
    run_id, by = run_id_arg(args.run_id), cmd.actor(args)
    current = await cmd.runtime.status(run_id)
    write = current.pending_effect
    if write is None or write.fence is None:
        raise RunNotAwaitingReconciliationError(
            f"run {run_id} has no write waiting for an answer (it is {current.status.value})"
        )
    answer = ANSWERS[args.answer]
    view = await cmd.runtime.reconcile(
        run_id, call_id=write.call_id, fence=args.fence or write.fence, answer=answer,
        answered_by=by, result=args.result, then=args.then, reason=args.reason,
    )  # fmt: skip
    if isinstance(cmd.runtime, ApiRuntime) and cmd.runtime.acted_as:
        by = cmd.runtime.acted_as
    cmd.out.print(
        f"answered {args.answer} on write {write.tool} (call {write.call_id}) of run {run_id} "
        f"as {by}; the run is {view.status.value}",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
    return EXIT_OK
