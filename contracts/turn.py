"""The end of a model turn: the one pure decision, made by the workflow on every model call
and by the model activity on the same terms, so that the activity completes a run on its
answer exactly when the workflow would have.

Budgets. A budget is spent when a run's total reaches a limit: tokens (prompt + completion)
>= `max_tokens`, or cost >= `max_cost_usd` (`contracts.profiles.spent_limit`). The check
follows every model call, so the reply that spent it is recorded (it was paid for) but
nothing more happens: none of its tool calls runs, no further model call is made (not even
the synthesis call after the iteration cap), and the run ends FAILED with reason
`budget_exhausted`, even when that reply was an answer. That check alone would let a run
overshoot by one call; a run that reserves (contracts/budget.py, workflows/budget.py)
never makes a call whose worst case does not fit its room, so its spend stays at most its
ceiling: such a turn comes back `over_budget`, no provider called, and ends it here too.

A cost limit fails closed: once any call's cost is unknown (no price), the run's cost is
unknown and the cost budget counts as spent. The worker refuses at start a profile with a
cost budget whose model (or fallback) has no price, so this is a guard, not the usual path.
A plan without a budget is never stopped here.
"""

from enum import Enum

from agentrt.contracts.profiles import spent_limit
from agentrt.contracts.run import STOPPING_VERDICTS, AnswerTerms, ModelResult


class TurnEnd(Enum):
    GUARDRAIL = "guardrail"  # the output guardrail stops the run (DENY, REQUIRE_APPROVAL)
    BUDGET = "budget"  # the run's budget is spent: it fails, even on an answer
    TOOLS = "tools"  # the turn's tool calls run, then the next turn
    INPUT = "input"  # the answer asks the user for more: the run pauses for input
    ANSWER = "answer"  # the run's answer: it completes
    INVALID = "invalid"  # an answer that fails the output schema: retried, or the run fails


def turn_end(terms: AnswerTerms, turn: ModelResult) -> TurnEnd:
    """How the turn `turn` ends a run whose spend before it and plan are `terms`."""
    if turn.guardrail in STOPPING_VERDICTS:
        return TurnEnd.GUARDRAIL
    if turn.over_budget or spent_limit(terms.usage + turn.usage, terms.budget) is not None:
        return TurnEnd.BUDGET
    if turn.tool_calls:
        return TurnEnd.TOOLS
    if turn.input_required and terms.pause_for_input:
        return TurnEnd.INPUT
    if turn.output_invalid and terms.output_schema is not None:
        return TurnEnd.INVALID
    return TurnEnd.ANSWER
