"""Model providers for a worker: built-ins, configured endpoints and plug-ins.

A provider name comes from exactly one source; two sources naming it is a ConfigError at
start (except that providers passed in code may replace the built-in scripted names):

- the scripted model, under each name of AGENTRT_SCRIPTED_PROVIDERS;
- `openai` from AGENTRT_OPENAI_API_KEY (+ AGENTRT_OPENAI_BASE_URL), kept as it was;
- the providers file (AGENTRT_PROVIDERS_FILE, YAML or JSON: workers/providers_file.py);
- the `agentrt.providers` entry-point group: the entry point's name is the provider's name,
  its value a factory called with a ProviderConfig that returns a ModelProvider;
- `extra`, providers passed in code (tests, embedding).

Answer levels come from the file's `answer_level` and AGENTRT_PROVIDER_ANSWER_LEVELS; when
both name a provider the stricter wins. Prices come from the file only.
"""

import difflib
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from agentrt.activities.ports import ModelProvider
from agentrt.activities.providers.openai_compat import OpenAICompatProvider
from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.pricing import PriceTable
from agentrt.contracts.profiles import Profile, stricter
from agentrt.core.settings import Settings
from agentrt.workers.native_providers import native_provider
from agentrt.workers.providers_file import ProviderEntry, read_providers_file

ENTRY_POINT_GROUP = "agentrt.providers"


@dataclass(frozen=True)
class ProviderConfig:
    """What a provider factory receives: its name, its `options` from the file, settings."""

    name: str
    options: Mapping[str, Any]
    settings: Settings


ProviderFactory = Callable[[ProviderConfig], ModelProvider]


@dataclass(frozen=True)
class LoadedProviders:
    """The worker's providers by name, with each one's answer level and prices if set."""

    providers: dict[str, ModelProvider]
    answer_levels: dict[str, str] = field(default_factory=dict)
    prices: dict[str, PriceTable] = field(default_factory=dict)


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
