"""Budgets: the pure check the loop makes after every model call.

A budget is spent when a run's total reaches a limit: tokens (prompt + completion) >=
`max_tokens`, or cost >= `max_cost_usd`. The loop checks after each model call, so the reply
that spent it is recorded (it was paid for) but nothing more happens: none of its tool calls
runs, no further model call is made (not even the synthesis call after the iteration cap),
and the run ends FAILED with reason `budget_exhausted`, even when that reply was an answer.
A run therefore overshoots a limit by at most one model call, which no check made before a
call can avoid, since a call's usage is known only once it returns.

A cost limit fails closed: once any call's cost is unknown (no price), the run's cost is
unknown and the cost budget counts as spent. The worker refuses at start a profile with a
cost budget whose model (or fallback) has no price, so this is a guard, not the usual path.

A plan without a budget (every run recorded before budgets) is never stopped here, so such
runs issue exactly the commands they did before.
"""

from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Usage
from agentrt.contracts.profiles import Budget, spent_limit
from agentrt.workflows._loop import Stop

__all__ = ["budget_stop", "spent_limit"]


def budget_stop(usage: Usage, budget: Budget | None) -> Stop | None:
    if spent_limit(usage, budget) is None:
        return None
    return Stop(TerminationReason.BUDGET_EXHAUSTED, error_type=ErrorType.BUDGET_EXHAUSTED)
