"""A user's toolbox, as a user writes it: one sync non-idempotent write with a context.
Every call is appended to BOOKED (in-process: the test's worker runs in this process)."""

import threading
from typing import Annotated, Any

from pydantic import Field

from agentrt import Toolbox, ToolContext, tool

BOOKED: list[dict[str, Any]] = []
_lock = threading.Lock()


@tool  # no effect declared: a non-idempotent write, fenced and approval-bound
def book_entry(
    account: str, amount_cents: Annotated[int, Field(gt=0)], ctx: ToolContext, memo: str = ""
) -> dict[str, Any]:
    """Book an entry on an account's ledger (not idempotent)."""
    ctx.heartbeat("booking")
    ctx.logger.info("booking an entry in run %s", ctx.run_id)
    with _lock:
        BOOKED.append(
            {
                "run_id": ctx.run_id,
                "call_id": ctx.call_id,
                "key": ctx.idempotency_key,
                "account": account,
                "amount_cents": amount_cents,
                "thread": threading.current_thread().name,
            }
        )
        entry = len(BOOKED)
    return {"entry": entry, "account": account, "amount_cents": amount_cents, "memo": memo}


toolbox = Toolbox("ledger", [book_entry])
