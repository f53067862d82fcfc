"""The budget ledger (workflows/budget.py) and a model call's worst case
(contracts/budget.py): pure state transitions, without Temporal."""

import pytest

from agentrt.contracts.budget import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    Allowance,
    as_budget,
    capped,
    fits,
    output_bound,
    prompt_tokens_bound,
    share_of,
    worst_case,
)
from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.messages import Message, ProviderRequest, ToolSpec, Usage
from agentrt.contracts.pricing import Price
from agentrt.contracts.profiles import Budget, Profile
from agentrt.workflows import _steps as steps
from agentrt.workflows import children
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Stop
from agentrt.workflows.budget import Ledger, LedgerError


def test_a_reservation_that_fits_is_taken_and_one_that_does_not_changes_nothing() -> None:
    ledger = Ledger(Budget(max_tokens=100, max_cost_usd=1.0))
    held = ledger.reserve(Allowance(tokens=60, cost_usd=0.5))
    assert held is not None
    assert ledger.room() == Allowance(tokens=40, cost_usd=0.5)
    assert ledger.reserve(Allowance(tokens=41, cost_usd=0.1)) is None  # tokens do not fit
    assert ledger.reserve(Allowance(tokens=1, cost_usd=0.51)) is None  # cost does not fit
    assert ledger.room() == Allowance(tokens=40, cost_usd=0.5)  # the refusals took nothing
    assert len(ledger.outstanding) == 1


def test_settle_spends_the_actual_and_frees_the_rest_of_the_reservation() -> None:
    ledger = Ledger(Budget(max_tokens=100))
    held = ledger.reserve(Allowance(tokens=60))
    assert held is not None
    spent = ledger.settle(held, Usage(prompt_tokens=20, completion_tokens=5, cost_usd=0.0))
    assert spent.total_tokens == 25 and ledger.spent == spent
    assert ledger.outstanding == {} and ledger.room() == Allowance(tokens=75)
    with pytest.raises(LedgerError):
        ledger.settle(held, Usage())  # settled once only
    with pytest.raises(LedgerError):
        ledger.release(held)


def test_release_gives_the_whole_reservation_back_unspent() -> None:
    ledger = Ledger(Budget(max_tokens=100))
    held = ledger.reserve_rest()
    assert held is not None and held.amount == Allowance(tokens=100)
    assert ledger.room() == Allowance(tokens=0) and ledger.reserve_rest() is None
    ledger.release(held)
    assert ledger.room() == Allowance(tokens=100) and ledger.spent.total_tokens == 0


def test_parallel_reservations_together_never_pass_the_ceiling() -> None:
    """Three calls in parallel (children, say) each reserve their worst case from the
    same room: the first two fit, the third waits for room or is refused, and however
    they settle the spend stays at most the ceiling."""
    ledger = Ledger(Budget(max_tokens=1000, max_cost_usd=0.30))
    worst = Allowance(tokens=400, cost_usd=0.12)
    a, b = ledger.reserve(worst), ledger.reserve(worst)
    assert a is not None and b is not None and a.id != b.id
    assert ledger.reserved().total_tokens == 800
    assert ledger.reserved().cost_usd == pytest.approx(0.24)
    assert ledger.reserve(worst) is None  # 200 tokens and USD 0.06 left: not for a third
    ledger.settle(a, Usage(prompt_tokens=100, completion_tokens=50, cost_usd=0.05))
    c = ledger.reserve(worst)  # a's unused reservation came back
    assert c is not None
    for held in (b, c):  # each spends its whole worst case
        ledger.settle(held, Usage(prompt_tokens=400, cost_usd=0.12))
    assert ledger.spent.total_tokens == 950 <= 1000
    assert ledger.spent.cost_usd is not None and ledger.spent.cost_usd <= 0.30


def test_an_unbounded_amount_never_fits_a_limit_and_no_budget_fits_anything() -> None:
    limited = Ledger(Budget(max_cost_usd=1.0))
    assert limited.reserve(Allowance(tokens=10)) is None  # no cost bound against a cost limit
    assert limited.reserve(Allowance(tokens=10, cost_usd=0.5)) is not None  # tokens unlimited
    free = Ledger(None)
    held = free.reserve(Allowance())
    assert held is not None and free.room() == Allowance()
    assert free.settle(held, Usage(prompt_tokens=10**9)).total_tokens == 10**9
    assert free.reserve_rest() is not None


def test_an_unknown_spent_cost_leaves_no_cost_room() -> None:
    ledger = Ledger(Budget(max_tokens=100, max_cost_usd=1.0), spent=Usage(prompt_tokens=5))
    assert ledger.room() == Allowance(tokens=95, cost_usd=0.0)
    assert ledger.reserve_rest() is None
    assert ledger.record(Usage(prompt_tokens=5)).total_tokens == 10  # unreserved spend


def _request(text: str, tools: bool) -> ProviderRequest:
    spec = ToolSpec(name="t", description="d", parameters={"type": "object"})
    return ProviderRequest(
        model="m",
        messages=[Message(role="system", content="I"), Message(role="user", content=text)],
        tools=[spec] if tools else None,
        max_tokens=50,
    )


def test_the_prompt_bound_is_at_least_its_utf8_bytes_and_grows_with_it() -> None:
    short, long = _request("hi", False), _request("é" * 1000, False)
    assert prompt_tokens_bound(long) >= 2000 + prompt_tokens_bound(short) - 10
    assert prompt_tokens_bound(_request("hi", True)) > prompt_tokens_bound(short) + 512


def test_worst_case_counts_the_reply_bound_at_the_dearer_price() -> None:
    request = _request("hello", False)
    cheap, dear = Price(input=1, output=2), Price(input=10, output=30)
    worst = worst_case(request, 50, [cheap, dear])
    assert worst.prompt_tokens == prompt_tokens_bound(request) and worst.completion_tokens == 50
    assert worst.cost_usd == pytest.approx(dear.cost(worst))
    assert worst_case(request, 50, [cheap, None]).cost_usd is None  # a fallback unpriced
    assert fits(worst, Allowance(tokens=worst.total_tokens))
    assert not fits(worst, Allowance(tokens=worst.total_tokens - 1))
    assert fits(worst, Allowance(cost_usd=worst.cost_usd))
    assert not fits(worst.model_copy(update={"cost_usd": None}), Allowance(cost_usd=1e9))


def test_a_budget_gives_every_request_a_reply_bound() -> None:
    assert output_bound(Profile(name="p", model="scripted:demo"), None) is None
    budgeted = Profile(name="p", model="scripted:demo", budget=Budget(max_tokens=10))
    assert output_bound(budgeted, budgeted.budget) == DEFAULT_MAX_OUTPUT_TOKENS
    own = Profile(
        name="p", model="scripted:demo", budget=Budget(max_tokens=10), max_output_tokens=7
    )
    assert output_bound(own, own.budget) == 7


def test_a_model_call_with_no_room_left_stops_the_run_before_it_is_scheduled() -> None:
    """A child's reservation holds all the room: the parent's next model call is not
    made (the run stops budget_exhausted); once the child settles, the call gets the rest,
    and the run's totals have the child's spend."""
    ctx = RunContext(reserving=True, ledger=Ledger(Budget(max_tokens=100)))
    child = ctx.ledger.reserve(Allowance(tokens=100))
    assert child is not None
    with pytest.raises(Stop) as stopped:
        steps.reserve(ctx)
    assert stopped.value.reason is TerminationReason.BUDGET_EXHAUSTED
    assert stopped.value.room == Allowance(tokens=0) and stopped.value.worst_case is None
    ctx.spend(child, Usage(prompt_tokens=30, cost_usd=0.0))
    hold = steps.reserve(ctx)
    assert hold is not None and hold.amount == Allowance(tokens=70)
    assert ctx.state.usage.total_tokens == 30
    assert steps.reserve(RunContext(reserving=False)) is None  # a run that does not reserve


def test_a_childs_share_is_an_even_part_of_the_room_and_none_when_there_is_none() -> None:
    """Three children in a turn: each reserves a quarter of the room then left (the last
    quarter for the parent's own next call); with no room, the call is refused (False)."""
    ctx = RunContext(reserving=True, ledger=Ledger(Budget(max_tokens=1000, max_cost_usd=1.0)))
    ctx.delegations_left = 3
    holds = [children._share(ctx) for _ in range(3)]
    amounts = [h.amount for h in holds if h]
    assert amounts[0] == Allowance(tokens=250, cost_usd=0.25)
    assert [a.tokens for a in amounts] == [250, 250, 250]  # 750, then 500, then 250 split
    assert ctx.ledger.room() == Allowance(tokens=250, cost_usd=0.25)
    full = RunContext(reserving=True, ledger=Ledger(Budget(max_tokens=10)))
    assert full.ledger.reserve(Allowance(tokens=10)) is not None
    assert children._share(full) is False
    assert children._share(RunContext()) is None  # a run that does not reserve


def test_a_share_caps_the_childs_own_budget_and_only_tightens() -> None:
    assert share_of(Allowance(tokens=3), 4) is None  # nothing to give on a limited side
    assert share_of(Allowance(), 4) == Allowance()
    assert as_budget(Allowance()) is None
    cap = as_budget(Allowance(tokens=500, cost_usd=None))
    assert cap == Budget(max_tokens=500)
    own = Budget(max_tokens=800, max_cost_usd=0.2)
    assert capped(own, cap) == Budget(max_tokens=500, max_cost_usd=0.2)
    assert capped(Budget(max_tokens=100), cap) == Budget(max_tokens=100)
    assert capped(None, cap) == cap and capped(own, None) == own
