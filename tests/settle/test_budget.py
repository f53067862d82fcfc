"""Budgets, usage sums and prices: the pure pieces, without Temporal."""

import pytest
from pydantic import ValidationError

from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.messages import Usage
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.pricing import Price, PriceTable
from agentrt.contracts.profiles import Budget, Profile, spent_limit
from agentrt.contracts.run import AnswerTerms, ModelResult
from agentrt.contracts.turn import turn_end
from agentrt.workflows._loop import LoopState, Stop
from agentrt.workflows.settle import turn_stop


def budget_stop(usage: Usage, budget: Budget | None) -> Stop | None:
    """The stop the workflow makes after a turn that brought the run to `usage`."""
    terms = AnswerTerms(sequence=2, usage=Usage.none(), pause_for_input=False, budget=budget)
    turn = ModelResult(usage=usage)
    return turn_stop(turn_end(terms, turn), turn)


def test_a_sum_with_an_unknown_cost_is_unknown_never_zero() -> None:
    start = LoopState().usage
    assert start == Usage(prompt_tokens=0, completion_tokens=0, cost_usd=0.0)
    priced = start + Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.25)
    assert (priced.total_tokens, priced.cost_usd) == (15, 0.25)
    unknown = priced + Usage(prompt_tokens=1, completion_tokens=1)  # no price
    assert unknown.total_tokens == 17 and unknown.cost_usd is None
    later = unknown + Usage(prompt_tokens=1, cost_usd=1.0)
    assert later.cost_usd is None  # once unknown, the run's cost stays unknown


def test_price_table_per_model_default_and_unknown() -> None:
    table = PriceTable(models={"big": Price(input=10, output=30)}, default=Price(input=1, output=2))
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000)
    assert table.cost("big", usage) == pytest.approx(10 + 15)
    assert table.cost("other", usage) == pytest.approx(1 + 1)
    assert PriceTable(models={"big": Price(input=1, output=1)}).cost("other", usage) is None
    assert PriceTable(default=Price(input=0, output=0)).cost("x", usage) == 0.0
    with pytest.raises(ValidationError):
        Price(input=-1, output=0)


def test_no_budget_never_stops() -> None:
    huge = Usage(prompt_tokens=10**9, completion_tokens=10**9)  # and cost unknown
    assert spent_limit(huge, None) is None
    assert budget_stop(huge, None) is None


def test_token_budget_is_spent_when_the_total_reaches_it() -> None:
    budget = Budget(max_tokens=100)
    assert spent_limit(Usage(prompt_tokens=60, completion_tokens=39), budget) is None
    assert spent_limit(Usage(prompt_tokens=60, completion_tokens=40), budget) == "max_tokens"
    stop = budget_stop(Usage(prompt_tokens=200), budget)
    assert stop is not None and stop.reason is TerminationReason.BUDGET_EXHAUSTED
    assert stop.error_type == "BudgetExhausted"


def test_cost_budget_is_spent_at_the_limit_and_fails_closed_when_unknown() -> None:
    budget = Budget(max_cost_usd=0.5)
    assert spent_limit(Usage(prompt_tokens=10**6, cost_usd=0.49), budget) is None
    assert spent_limit(Usage(cost_usd=0.5), budget) == "max_cost_usd"
    assert spent_limit(Usage(prompt_tokens=1, cost_usd=None), budget) == "max_cost_usd"
    # Tokens alone do not matter to a cost-only budget.
    assert spent_limit(Usage(prompt_tokens=10**9, cost_usd=0.0), budget) is None


@pytest.mark.parametrize(
    "budget",
    [{"max_tokens": 0}, {"max_tokens": -5}, {"max_cost_usd": 0}, {"max_cost_usd": -0.1},
     {"max_cost_usd": float("nan")}, {}, {"max_token": 10}],
)  # fmt: skip
def test_a_budget_of_zero_negative_empty_or_misspelt_is_refused(budget: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        Profile(name="p", model="scripted:demo", budget=budget)  # type: ignore[arg-type]


def test_plans_recorded_before_budgets_have_none() -> None:
    old = {"profile": "p", "model": "scripted:demo", "max_iterations": 5, "tools": [],
           "privacy": "full", "timeouts": {}}  # fmt: skip
    assert RunPlan.model_validate(old).budget is None
