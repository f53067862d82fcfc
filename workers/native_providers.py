"""The native providers of the providers file (`api: anthropic`, `api: gemini`): their
`options`, checked when the file is read, and the provider built from an entry.

The vendors' SDKs are imported only when an entry names their API: together they take
seconds to import, which no worker without a native provider should pay at start.
"""

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrt.activities.ports import ModelProvider
from agentrt.activities.providers._native import DEFAULT_MAX_TOKENS  # no SDK imported

NativeApi = Literal["anthropic", "gemini"]


class AnthropicOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, gt=0)  # the API requires a cap


class GeminiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_output_tokens: int | None = Field(default=None, gt=0)  # None: the model's own


_OPTIONS: dict[str, type[AnthropicOptions | GeminiOptions]] = {
    "anthropic": AnthropicOptions,
    "gemini": GeminiOptions,
}


def check_options(api: NativeApi, name: str, options: Mapping[str, Any]) -> None:
    """ValueError naming the wrong option(s), never their values."""
    try:
        _OPTIONS[api].model_validate(dict(options))
    except ValidationError as exc:
        wrong = sorted({".".join(map(str, e["loc"])) for e in exc.errors()})
        raise ValueError(f"provider {name!r}: bad options {wrong} for api {api}") from None


def native_provider(
    api: NativeApi,
    name: str,
    api_key: str,
    base_url: str | None,
    timeout: float,
    options: Mapping[str, Any],
) -> ModelProvider:
    """The provider of an entry whose options check_options has passed."""
    opts = _OPTIONS[api].model_validate(dict(options))
    if isinstance(opts, AnthropicOptions):
        from agentrt.activities.providers import anthropic_messages

        return anthropic_messages.AnthropicProvider(
            api_key=api_key, base_url=base_url or anthropic_messages.DEFAULT_BASE_URL,
            timeout=timeout, max_tokens=opts.max_tokens, name=name,
        )  # fmt: skip
    from agentrt.activities.providers import gemini

    return gemini.GeminiProvider(
        api_key=api_key, base_url=base_url or gemini.DEFAULT_BASE_URL, timeout=timeout,
        max_output_tokens=opts.max_output_tokens, name=name,
    )  # fmt: skip
