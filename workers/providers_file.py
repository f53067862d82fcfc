"""The providers file (AGENTRT_PROVIDERS_FILE, YAML or JSON): its format, each entry
checked on its own (an endpoint, a native API, or a factory), and the file read whole
(workers/providers.py builds the providers it names)."""

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agentrt.activities.providers.openai_compat import DEFAULT_TIMEOUT_SECONDS
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.pricing import PriceTable
from agentrt.contracts.profiles import PrivacyLevel
from agentrt.contracts.strict import Strict
from agentrt.core.yaml_file import load_yaml
from agentrt.workers.native_providers import NativeApi, check_options

PROVIDERS_FILE_HELP = """\
providers:
  - name: local                      # profiles say model: local:<model>
    base_url: http://127.0.0.1:11434/v1
    answer_level: full               # optional: what of its output may be kept
    prices: {default: {input: 0, output: 0}}   # USD per 1M prompt / completion tokens
  - name: openai                     # replaces AGENTRT_OPENAI_API_KEY (use one, not both)
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY      # the key is read from this variable; unset is an error
    prices: {models: {gpt-4o-mini: {input: 0.15, output: 0.60}}}
  - name: claude                     # Anthropic's Messages API, through its SDK
    api: anthropic                   # base_url defaults to https://api.anthropic.com
    api_key_env: ANTHROPIC_API_KEY   # required for api: anthropic and api: gemini
    options: {max_tokens: 4096}      # optional: the answer's cap (Anthropic requires one)
    prices: {models: {claude-sonnet-4-5: {input: 3, output: 15}}}
  - name: gemini                     # Google's Gemini API, through google-genai
    api: gemini                      # base_url defaults to generativelanguage.googleapis.com
    api_key_env: GEMINI_API_KEY
    options: {max_output_tokens: 2048}   # optional
  - name: mine                       # a provider built by a factory (no entry point needed)
    factory: mypkg.models:make       # called with a ProviderConfig(name, options, settings)
    options: {temperature: 0}
  - name: scripted                   # no base_url, no factory: configures a provider of that
    prices: {default: {input: 1, output: 2}}   # name from elsewhere (built-in, entry point)
"""
_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class ProviderEntry(Strict):
    """One provider of the providers file: an endpoint, a native API, or a factory."""

    name: str = Field(pattern=_NAME)
    # The wire format of base_url: "openai" (Chat Completions), or a native API through
    # its vendor's SDK, whose base_url defaults to the vendor's.
    api: Literal["openai"] | NativeApi = "openai"
    base_url: str | None = None  # an endpoint speaking `api`
    api_key_env: str | None = None  # None: the endpoint needs no key
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0)
    factory: str | None = Field(default=None, description="pkg.module:attribute")
    options: dict[str, Any] = Field(default_factory=dict)
    answer_level: PrivacyLevel | None = None
    prices: PriceTable | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "ProviderEntry":
        if self.api != "openai":
            check_options(self.api, self.name, self.options)  # ValueError on a bad one
            if self.factory is not None:
                raise ValueError(f"provider {self.name!r}: give api or factory, not both")
            if self.api_key_env is None:
                raise ValueError(f"provider {self.name!r}: api {self.api} needs api_key_env")
            return self
        if self.base_url is not None and self.factory is not None:
            raise ValueError(f"provider {self.name!r}: give base_url or factory, not both")
        if self.base_url is not None and self.options:
            raise ValueError(f"provider {self.name!r}: options are for factories and plug-ins")
        if self.base_url is None and self.api_key_env is not None:
            raise ValueError(f"provider {self.name!r}: api_key_env needs a base_url")
        if self.factory is not None and not _FACTORY.match(self.factory):
            raise ValueError(f"provider {self.name!r}: factory must be 'pkg.module:attr'")
        return self


class ProvidersFile(Strict):
    """The providers file (AGENTRT_PROVIDERS_FILE): a list of providers."""

    providers: list[ProviderEntry] = Field(default_factory=list)


def read_providers_file(path: Path) -> list[ProviderEntry]:
    """The file's entries, checked; a ConfigError for a bad file or a name given twice."""
    entries = load_yaml(path, ProvidersFile, "providers file").providers
    names = [e.name for e in entries]
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"providers file {path} declares {dupes} more than once")
    return entries
