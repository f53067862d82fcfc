"""A tool call that spends from the run's budget: a remote agent's skill declares the worst
case of one call (`reserve`), as its own spend is not reported. A budgeted run reserves it
from its room before the call, as a child's share is reserved (workflows/children.py): no
room, and the call is refused, nothing sent. After the call (whatever its end) the
reservation is counted spent in full. Parallel calls reserve together (the ledger,
workflows/budget.py). New in history, so asked of Temporal, and only where a tool
declares a reserve: no plan recorded before it has one."""

from typing import Literal

from temporalio import workflow

from agentrt.workflows._context import RunContext
from agentrt.workflows.budget import Reservation, spent_all

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.plan import ToolPlan

TOOL_RESERVE = "tool-reserve"
NO_ROOM = "Refused: the run's budget has no room left for this call's declared worst case."


def reserve(ctx: RunContext, tool: ToolPlan | None) -> Reservation | Literal[False] | None:
    """The call's reservation (None: nothing to reserve; False: no room)."""
    if tool is None or tool.reserve is None or not ctx.reserving:
        return None
    if not workflow.patched(TOOL_RESERVE):
        return None
    hold = ctx.ledger.reserve(tool.reserve)
    return False if hold is None else hold


def spent(ctx: RunContext, hold: Reservation | Literal[False] | None) -> None:
    """The call ended: its reservation counted spent in full (its spend is not reported)."""
    if hold:
        ctx.spend(hold, spent_all(hold.amount))
