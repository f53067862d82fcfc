"""Model prices: USD per million tokens, per model, with an optional default per provider."""

from pydantic import Field

from agentrt.contracts.messages import Usage
from agentrt.contracts.strict import Strict

PER_TOKENS = 1_000_000


class Price(Strict):
    input: float = Field(ge=0, allow_inf_nan=False, description="USD per 1M prompt tokens")
    output: float = Field(ge=0, allow_inf_nan=False, description="USD per 1M completion tokens")

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / (
            PER_TOKENS
        )


class PriceTable(Strict):
    """One provider's prices. A model missing from `models` costs `default`, if any."""

    models: dict[str, Price] = Field(default_factory=dict)
    default: Price | None = None

    def price(self, model: str) -> Price | None:
        return self.models.get(model, self.default)

    def cost(self, model: str, usage: Usage) -> float | None:
        """None when the model has no price: unknown, never a silent 0."""
        price = self.price(model)
        return None if price is None else price.cost(usage)
