"""The one decision on a model turn (contracts.turn.turn_end): the workflow makes it on its
terms, and the model activity completes the run exactly when it says ANSWER."""

import pytest

from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.profiles import Budget
from agentrt.contracts.run import STOPPING_VERDICTS, AnswerTerms, ModelResult
from agentrt.contracts.turn import TurnEnd, turn_end
from agentrt.workflows.settle import turn_stop

CALL = ToolCall(call_id="r1.1", name="lookup_order", arguments={})


def _terms(*, pause: bool = False, budget: Budget | None = None) -> AnswerTerms:
    return AnswerTerms(sequence=3, usage=Usage(prompt_tokens=5), pause_for_input=pause,
                       budget=budget)  # fmt: skip


def test_a_plain_reply_is_the_answer() -> None:
    assert turn_end(_terms(), ModelResult()) is TurnEnd.ANSWER
    assert turn_stop(TurnEnd.ANSWER, ModelResult()) is None


def test_tool_calls_go_on_and_a_question_pauses_only_where_the_terms_allow() -> None:
    assert turn_end(_terms(), ModelResult(tool_calls=[CALL])) is TurnEnd.TOOLS
    asking = ModelResult(input_required=True)
    assert turn_end(_terms(pause=True), asking) is TurnEnd.INPUT
    assert turn_end(_terms(pause=False), asking) is TurnEnd.ANSWER  # the last round answers


@pytest.mark.parametrize("verdict", sorted(STOPPING_VERDICTS))
def test_a_stopping_verdict_stops_before_anything_else(verdict: str) -> None:
    turn = ModelResult(guardrail=verdict, tool_calls=[CALL], usage=Usage(prompt_tokens=99))
    end = turn_end(_terms(budget=Budget(max_tokens=10)), turn)
    assert end is TurnEnd.GUARDRAIL
    stop = turn_stop(end, turn)
    assert stop is not None and stop.error_type is not None


def test_a_spent_budget_stops_even_an_answer_and_counts_the_spend_before_the_call() -> None:
    budget = Budget(max_tokens=10)
    assert turn_end(_terms(budget=budget), ModelResult(usage=Usage(prompt_tokens=4))) is (
        TurnEnd.ANSWER
    )
    spent = ModelResult(usage=Usage(prompt_tokens=5))  # 5 before + 5 = the limit
    assert turn_end(_terms(budget=budget), spent) is TurnEnd.BUDGET
    stop = turn_stop(TurnEnd.BUDGET, spent)
    assert stop is not None and stop.error_type == "BudgetExhausted"


def test_an_answer_that_fails_the_output_schema_is_invalid_only_in_a_typed_run() -> None:
    schema = {"type": "object"}
    typed = AnswerTerms(
        sequence=5, usage=Usage.none(), pause_for_input=False, budget=None, output_schema=schema
    )
    untyped = typed.model_copy(update={"output_schema": None})
    invalid = ModelResult(output_invalid=True)
    assert turn_end(typed, invalid) is TurnEnd.INVALID
    assert turn_end(untyped, invalid) is TurnEnd.ANSWER
    assert turn_end(typed, ModelResult()) is TurnEnd.ANSWER
