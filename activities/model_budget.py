"""The model activity's side of a budget that cannot be overshot: the call's worst case
(contracts/budget.py), judged against the room the workflow's ledger reserved for it
(ModelRequest.answer.allowance) before any provider is called."""

from collections.abc import Mapping
from typing import Any

from agentrt.contracts.budget import fits, worst_case
from agentrt.contracts.messages import ProviderRequest, Usage
from agentrt.contracts.pricing import Price, PriceTable
from agentrt.contracts.run import ModelRequest, ModelResult


def price_of(prices: Mapping[str, PriceTable], ref: str) -> Price | None:
    """The price of the model `ref` ("provider:model"), or None when it has none."""
    provider, _, model = ref.partition(":")
    table = prices.get(provider)
    return None if table is None else table.price(model)


def reservation(
    req: ModelRequest, request: ProviderRequest, prices: Mapping[str, PriceTable]
) -> tuple[Usage | None, ModelResult | None]:
    """The call's worst case (None: the run reserves nothing), and the turn to return
    instead of calling the provider when it does not fit the allowance. Without a reply
    bound the worst case is unbounded: it fits no budget (fails closed)."""
    room = req.answer.allowance
    if room is None:
        return None, None
    refs = [req.model, *([req.fallback_model] if req.fallback_model else [])]
    bound = request.max_tokens
    if bound is None:
        return None, ModelResult(over_budget=True, usage=Usage.none())
    worst = worst_case(request, bound, [price_of(prices, r) for r in refs])
    if not fits(worst, room):
        return worst, ModelResult(over_budget=True, usage=Usage.none(), reserved=worst)
    return worst, None


def reserved_fields(worst: Usage | None) -> dict[str, Any]:
    """The worst case, as the model_call event shows it beside the call's usage."""
    if worst is None:
        return {}
    return {"reserved_tokens": worst.total_tokens, "reserved_cost_usd": worst.cost_usd}


def reserved_of(seen: Mapping[str, Any]) -> Usage | None:
    """The worst case a recorded call reserved (absent: it reserved none)."""
    tokens = seen.get("reserved_tokens")
    if not isinstance(tokens, int):
        return None
    return Usage(prompt_tokens=tokens, cost_usd=float_or_none(seen.get("reserved_cost_usd")))


def float_or_none(value: object) -> float | None:
    """A recorded number as a float; anything else (absent: not recorded) as unknown."""
    return float(value) if isinstance(value, int | float) else None
