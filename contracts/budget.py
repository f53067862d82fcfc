"""A model call's worst case, and the room a run's budget leaves it: the pure pieces of
budgets that cannot be overshot (the ledger is workflows/budget.py).

Before each model call the workflow reserves the room its budget has left (the ceiling
minus the spend and every other reservation outstanding) and hands it to the model
activity as the call's `Allowance`. The activity makes the call only if the call's worst
case fits in it: the prompt's tokens, bounded from above by the UTF-8 bytes of everything
sent (a byte-level BPE token is at least one byte) plus a fixed overhead per message and
per request (the provider's chat template, a tool-use preamble), plus the request's
`max_tokens` (which the request carries, so the reply cannot be longer), at the model's
price (the dearer of the model and its fallback). If it does not fit, no provider is
called and the run ends FAILED `budget_exhausted`, its spend at most its ceiling.
"""

from typing import TypeVar

from pydantic import BaseModel, Field

from agentrt.contracts.messages import ProviderRequest, Usage
from agentrt.contracts.pricing import Price
from agentrt.contracts.profiles import Budget, Profile

# The output bound a budgeted run's requests carry when its profile sets none.
DEFAULT_MAX_OUTPUT_TOKENS = 4096
# Tokens a provider may add beyond the bytes sent: per message (role markers, the chat
# template), per request, and once more when tools are offered (a tool-use preamble).
MESSAGE_OVERHEAD_TOKENS = 16
REQUEST_OVERHEAD_TOKENS = 64
TOOLS_OVERHEAD_TOKENS = 512


class Allowance(BaseModel):
    """The room a run's ledger reserved for one call. A None limit: the run's budget sets
    none on that dimension."""

    tokens: int | None = None
    cost_usd: float | None = None


class BudgetState(BaseModel):
    """A run's ledger as its workflow holds it (the `budget` query): the limits, the spend,
    the reservations outstanding (a model call in flight holds the room it was given) and
    the room left. No budget: every dimension unlimited (None), the spend still summed."""

    budget: Budget | None = None
    spent: Usage = Field(default_factory=Usage.none)
    reserved: Allowance = Field(default_factory=Allowance)
    room: Allowance = Field(default_factory=Allowance)


def prompt_tokens_bound(request: ProviderRequest) -> int:
    """An upper bound on the prompt tokens `request` costs, from its serialized bytes."""
    sent = request.model_dump_json(include={"messages", "tools", "output_schema"})
    overhead = REQUEST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS * len(request.messages)
    if request.tools:
        overhead += TOOLS_OVERHEAD_TOKENS
    return len(sent.encode()) + overhead


def worst_case(request: ProviderRequest, max_tokens: int, prices: list[Price | None]) -> Usage:
    """The most `request` can cost with a reply of at most `max_tokens`: its cost the
    highest of `prices` (the model's and its fallback's), unknown if any is missing."""
    usage = Usage(prompt_tokens=prompt_tokens_bound(request), completion_tokens=max_tokens)
    if not prices or any(p is None for p in prices):
        return usage
    cost = max(p.cost(usage) for p in prices if p is not None)
    return usage.model_copy(update={"cost_usd": cost})


def fits(worst: Usage, room: Allowance) -> bool:
    """Whether a call whose worst case is `worst` fits in `room`. An unknown cost never
    fits a cost limit (fails closed)."""
    if room.tokens is not None and worst.total_tokens > room.tokens:
        return False
    if room.cost_usd is not None:
        return worst.cost_usd is not None and worst.cost_usd <= room.cost_usd
    return True


def output_bound(profile: Profile, budget: Budget | None) -> int | None:
    """The reply bound a run of `profile` under `budget` (its own, or the one its parent
    granted) sends with each request (RunPlan.max_output_tokens)."""
    if profile.max_output_tokens is not None:
        return profile.max_output_tokens
    return DEFAULT_MAX_OUTPUT_TOKENS if budget is not None else None


# --- a child's share of its parent's budget ---------------------------------------------


def share_of(room: Allowance, parts: int) -> Allowance | None:
    """`room` split evenly in `parts`; None when a limited side has nothing to give."""
    tokens = None if room.tokens is None else room.tokens // parts
    cost = None if room.cost_usd is None else room.cost_usd / parts
    if tokens == 0 or cost == 0.0:
        return None
    return Allowance(tokens=tokens, cost_usd=cost)


def as_budget(amount: Allowance) -> Budget | None:
    """A reservation as the budget of the run it is for (None: it limits nothing)."""
    if amount.tokens is None and amount.cost_usd is None:
        return None
    return Budget(max_tokens=amount.tokens, max_cost_usd=amount.cost_usd)


def capped(own: Budget | None, cap: Budget | None) -> Budget | None:
    """A run's budget: its profile's, within the one its parent granted (the lower limit
    on each side). A cap only ever tightens."""
    if cap is None or own is None:
        return cap or own
    return Budget(
        max_tokens=_lower(own.max_tokens, cap.max_tokens),
        max_cost_usd=_lower(own.max_cost_usd, cap.max_cost_usd),
    )


_N = TypeVar("_N", int, float)


def _lower(a: _N | None, b: _N | None) -> _N | None:
    if a is None or b is None:
        return b if a is None else a
    return min(a, b)
