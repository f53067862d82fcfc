"""The model activity's side of a budget (activities/model_budget.py) and the reply bound
every provider sends (ProviderRequest.max_tokens): without Temporal."""

from agentrt.activities.model_budget import reservation, reserved_fields
from agentrt.activities.providers._native import bounded
from agentrt.activities.providers.openai_compat import bound_key, request_body
from agentrt.activities.providers.scripted import RuleSet, ScriptedProvider
from agentrt.contracts.budget import Allowance, prompt_tokens_bound
from agentrt.contracts.messages import Message, ProviderRequest, Usage
from agentrt.contracts.pricing import Price, PriceTable
from agentrt.contracts.run import AnswerTerms, ModelRequest

PRICES = {"priced": PriceTable(default=Price(input=1000, output=1000))}


def _req(room: Allowance | None, fallback: str | None = None) -> ModelRequest:
    terms = AnswerTerms(
        sequence=2, usage=Usage.none(), pause_for_input=False, budget=None, allowance=room
    )
    return ModelRequest(
        run_id="r", privacy="full", round=1, sequence=1, offer_tools=False,
        model="priced:m", fallback_model=fallback, answer=terms, max_tokens=50,
    )  # fmt: skip


def _request(max_tokens: int | None = 50) -> ProviderRequest:
    return ProviderRequest(model="m", messages=[Message(role="user", content="hello")],
                           max_tokens=max_tokens)  # fmt: skip


def test_without_an_allowance_nothing_is_reserved_or_refused() -> None:
    assert reservation(_req(None), _request(), PRICES) == (None, None)


def test_a_call_whose_worst_case_fits_is_made_and_one_that_does_not_is_refused() -> None:
    worst_tokens = prompt_tokens_bound(_request()) + 50
    worst, refused = reservation(_req(Allowance(tokens=worst_tokens)), _request(), PRICES)
    assert refused is None and worst is not None and worst.total_tokens == worst_tokens
    assert reserved_fields(worst) == {"reserved_tokens": worst_tokens,
                                      "reserved_cost_usd": worst.cost_usd}  # fmt: skip
    worst, refused = reservation(_req(Allowance(tokens=worst_tokens - 1)), _request(), PRICES)
    assert refused is not None and refused.over_budget and refused.reserved == worst
    assert refused.usage == Usage.none()  # no provider called: nothing spent, cost known


def test_a_cost_room_fails_closed_without_a_price_or_a_reply_bound() -> None:
    room = Allowance(cost_usd=100.0)
    _, unpriced_fallback = reservation(_req(room, fallback="free:x"), _request(), PRICES)
    assert unpriced_fallback is not None and unpriced_fallback.over_budget
    _, unbounded = reservation(_req(room), _request(max_tokens=None), PRICES)
    assert unbounded is not None and unbounded.over_budget
    assert reservation(_req(room), _request(), PRICES)[1] is None


def test_providers_send_the_reply_bound() -> None:
    assert request_body(_request(50))["max_tokens"] == 50
    assert "max_tokens" not in request_body(_request(None))
    # OpenAI's own API: the name its reasoning models take too; other servers: the older one.
    assert bound_key("https://api.openai.com/v1") == "max_completion_tokens"
    assert bound_key("http://127.0.0.1:11434/v1") == "max_tokens"
    assert request_body(_request(50), None, "max_completion_tokens") == {
        "model": "m", "messages": [{"role": "user", "content": "hello"}],
        "max_completion_tokens": 50,
    }  # fmt: skip
    assert bounded(_request(50), 4096) == 50  # the request's, under the provider's own
    assert bounded(_request(8000), 4096) == 4096  # never above the provider's own
    assert bounded(_request(None), 4096) == 4096 and bounded(_request(None), None) is None
    assert bounded(_request(50), None) == 50


async def test_the_scripted_model_stops_at_the_reply_bound() -> None:
    provider = ScriptedProvider(RuleSet(default_reply="word " * 400))
    whole = await provider.complete(_request(None))
    assert whole.usage.completion_tokens == 500 and whole.finish_reason == "stop"
    cut = await provider.complete(_request(50))
    assert cut.usage.completion_tokens == 50 and cut.finish_reason == "length"
    assert len(cut.content) == 200
