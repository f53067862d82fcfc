"""Model providers for a worker: built-ins, configured endpoints and plug-ins.

A provider name comes from exactly one source; two sources naming it is a ConfigError at
start (except that providers passed in code may replace the built-in scripted names):

- the scripted model, under each name of AGENTRT_SCRIPTED_PROVIDERS;
- `openai` from AGENTRT_OPENAI_API_KEY (+ AGENTRT_OPENAI_BASE_URL), kept as it was;
- the providers file (AGENTRT_PROVIDERS_FILE, YAML or JSON; see PROVIDERS_FILE_HELP);
- the `agentrt.providers` entry-point group: the entry point's name is the provider's name,
  its value a factory called with a ProviderConfig that returns a ModelProvider;
- `extra`, providers passed in code (tests, embedding).

Answer levels come from the file's `answer_level` and AGENTRT_PROVIDER_ANSWER_LEVELS; when
both name a provider the stricter wins. Prices come from the file only.
"""

import difflib
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agentrt.activities.ports import ModelProvider
from agentrt.activities.providers.openai_compat import DEFAULT_TIMEOUT_SECONDS, OpenAICompatProvider
from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.pricing import PriceTable
from agentrt.contracts.profiles import PrivacyLevel, Profile, stricter
from agentrt.contracts.strict import Strict
from agentrt.core.settings import Settings
from agentrt.core.yaml_file import load_yaml
from agentrt.workers.native_providers import NativeApi, check_options, native_provider

ENTRY_POINT_GROUP = "agentrt.providers"
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


@dataclass(frozen=True)
class ProviderConfig:
    """What a provider factory receives: its name, its `options` from the file, settings."""

    name: str
    options: Mapping[str, Any]
    settings: Settings


ProviderFactory = Callable[[ProviderConfig], ModelProvider]


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


@dataclass(frozen=True)
class LoadedProviders:
    """The worker's providers by name, with each one's answer level and prices if set."""

    providers: dict[str, ModelProvider]
    answer_levels: dict[str, str] = field(default_factory=dict)
    prices: dict[str, PriceTable] = field(default_factory=dict)


def read_providers_file(path: Path) -> list[ProviderEntry]:
    """The file's entries, checked; a ConfigError for a bad file or a name given twice."""
    entries = load_yaml(path, ProvidersFile, "providers file").providers
    names = [e.name for e in entries]
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"providers file {path} declares {dupes} more than once")
    return entries


class _Built:
    """The providers built so far, each name once, with where it came from."""

    def __init__(self) -> None:
        self.providers: dict[str, ModelProvider] = {}
        self.origin: dict[str, str] = {}

    def claim(self, name: str, source: str) -> None:
        if name in self.origin:
            raise ConfigError(
                f"provider {name!r} is defined twice: {self.origin[name]} and {source}"
            )

    def add(self, name: str, provider: ModelProvider, source: str) -> None:
        self.claim(name, source)
        self.providers[name], self.origin[name] = provider, source


def load_providers(
    settings: Settings,
    extra: Mapping[str, ModelProvider] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> LoadedProviders:
    """Every provider the worker has: the scripted model, AGENTRT_OPENAI_API_KEY's, the
    providers file's, installed plug-ins (entry points) and `extra` from code. A name
    defined twice, or an entry nothing builds, is a ConfigError."""
    env = os.environ if environ is None else environ
    entries = read_providers_file(settings.providers.file) if settings.providers.file else []
    where = f"providers file {settings.providers.file}"
    extra = dict(extra or {})
    built = _Built()
    _add_built_in(built, settings, extra)
    _add_file_entries(built, settings, entries, env, where)
    options = {
        e.name: e.options
        for e in entries
        if e.base_url is None and e.factory is None and e.api == "openai"
    }
    for point in plugin_entry_points():
        source = f"entry point {point.value}"
        built.claim(point.name, source)  # before the factory runs: a clash builds nothing
        built.add(
            point.name, _construct(point, options.pop(point.name, {}), settings, source), source
        )
    for name, provider in extra.items():  # scripted names in `extra` were not built
        built.add(name, provider, "code")
    for name, opts in options.items():
        if name not in built.providers:
            raise ConfigError(
                f"{where}: provider {name!r} has no base_url or factory, and no provider of "
                "that name is installed (entry point), built in or passed in code"
            )
        if opts:
            raise ConfigError(f"{where}: provider {name!r} is not a plug-in; it takes no options")
    return LoadedProviders(
        providers=built.providers,
        answer_levels=_answer_levels(settings, entries),
        prices={e.name: e.prices for e in entries if e.prices is not None},
    )


def _add_built_in(built: _Built, settings: Settings, extra: Mapping[str, ModelProvider]) -> None:
    """The scripted model under each of its names (unless code passes one), and the
    provider AGENTRT_OPENAI_API_KEY makes."""
    scripted_names = [
        n.strip() for n in settings.providers.scripted_providers.split(",") if n.strip()
    ]
    if missing := [n for n in scripted_names or ["scripted"] if n not in extra]:
        pace_ms = settings.providers.scripted_pace_ms
        scripted = ScriptedProvider.from_file(
            settings.providers.rules_file, pace=None if pace_ms is None else pace_ms / 1000
        )
        for name in missing:
            built.add(name, scripted, "AGENTRT_SCRIPTED_PROVIDERS")
    if settings.providers.openai_api_key is not None:
        legacy = settings.providers.openai_api_key.get_secret_value()
        if not legacy.strip():
            raise ConfigError("AGENTRT_OPENAI_API_KEY is set but empty")
        base_url = settings.providers.openai_base_url
        built.add("openai", OpenAICompatProvider(api_key=legacy, base_url=base_url),
                  "AGENTRT_OPENAI_API_KEY")  # fmt: skip


def _add_file_entries(
    built: _Built,
    settings: Settings,
    entries: list[ProviderEntry],
    env: Mapping[str, str],
    where: str,
) -> None:
    """The providers file's entries that build a provider here: native APIs, OpenAI-
    compatible servers and factories (a plug-in's options are checked by the caller)."""
    for e in entries:
        if e.api != "openai":
            secret = _api_key(e, env, where) or ""  # never None: the entry requires a variable
            built.add(e.name, native_provider(e.api, e.name, secret, e.base_url,
                      e.timeout_seconds, e.options), where)  # fmt: skip
        elif e.base_url is not None:
            key = _api_key(e, env, where)
            built.add(e.name, OpenAICompatProvider(api_key=key, base_url=e.base_url,
                      timeout=e.timeout_seconds, name=e.name), where)  # fmt: skip
        elif e.factory is not None:
            point = EntryPoint(name=e.name, value=e.factory, group=ENTRY_POINT_GROUP)
            built.add(e.name, _construct(point, e.options, settings, f"factory {e.factory}"),
                      where)  # fmt: skip


def plugin_entry_points() -> list[EntryPoint]:
    """The installed `agentrt.providers` entry points, one per name."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        seen = found.get(point.name)
        if seen is not None and seen.value != point.value:  # the same one twice is harmless
            raise ConfigError(
                f"provider entry point {point.name!r} is installed twice: "
                f"{seen.value} and {point.value}"
            )
        found[point.name] = point
    return list(found.values())


def check_budgets(profiles: Iterable[Profile], prices: Mapping[str, PriceTable]) -> None:
    """A cost budget needs a price for the profile's model and its fallback: without one
    the run's cost is unknown and the budget would stop the run after its first call."""
    for p in profiles:
        if p.budget is None or p.budget.max_cost_usd is None:
            continue
        for ref in filter(None, (p.model, p.fallback_model)):
            provider, _, model = ref.partition(":")
            table = prices.get(provider)
            if table is None or table.price(model) is None:
                raise ConfigError(
                    f"profile {p.name!r} sets budget.max_cost_usd but {ref!r} has no price: "
                    f"add prices for provider {provider!r} in the providers file"
                )


def check_models(profiles: Iterable[Profile], providers: Collection[str]) -> None:
    """Each profile's model and fallback name a provider this worker has: otherwise every
    run of it would fail provider_failed, so the worker refuses to start instead."""
    for p in profiles:
        for ref in filter(None, (p.model, p.fallback_model)):
            provider = ref.partition(":")[0]
            if provider in providers:
                continue
            close = difflib.get_close_matches(provider, sorted(providers), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"profile {p.name!r} names model {ref!r}, but no provider {provider!r} is "
                f"configured ({hint}configured: {', '.join(sorted(providers)) or 'none'}; "
                "see AGENTRT_PROVIDERS_FILE)"
            )


def _api_key(entry: ProviderEntry, env: Mapping[str, str], where: str) -> str | None:
    if entry.api_key_env is None:
        return None
    value = env.get(entry.api_key_env)
    if value is None or not value.strip():  # never a silent empty key
        state = "is not set" if value is None else "is empty"
        raise ConfigError(
            f"{where}: provider {entry.name!r} takes its API key from the environment "
            f"variable {entry.api_key_env!r}, which {state}"
        )
    return value


def _construct(
    point: EntryPoint, options: Mapping[str, Any], settings: Settings, source: str
) -> ModelProvider:
    try:
        factory = point.load()
    except Exception as exc:
        raise ConfigError(
            f"provider {point.name!r} ({source}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(factory):
        raise ConfigError(f"provider {point.name!r} ({source}) is not callable")
    try:
        provider = factory(ProviderConfig(name=point.name, options=options, settings=settings))
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"provider {point.name!r} ({source}) failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(getattr(provider, "complete", None)):
        raise ConfigError(
            f"provider {point.name!r} ({source}) returned {type(provider).__name__}, "
            "which has no complete(request) method"
        )
    result: ModelProvider = provider
    return result


def _answer_levels(settings: Settings, entries: list[ProviderEntry]) -> dict[str, str]:
    try:
        levels = settings.providers.answer_levels()
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    for e in entries:
        if e.answer_level is not None:
            levels[e.name] = stricter(e.answer_level, levels.get(e.name))
    return levels
