"""Provider loading: OpenAI-compatible endpoints from the providers file (real HTTP servers on
127.0.0.1), entry-point plug-ins (a real dist-info on sys.path), and the start-up errors."""

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.workers.providers import check_budgets, load_providers
from tests.activities.test_openai_provider import Canned, FakeServer, completion

PLUGIN = """
from agentrt.contracts.messages import ProviderReply, Usage

CALLS = []


class Echo:
    def __init__(self, greeting):
        self.greeting = greeting

    async def complete(self, request):
        return ProviderReply(
            content=f"{self.greeting} from {request.model}: {request.messages[-1].content}",
            usage=Usage(prompt_tokens=3, completion_tokens=2, cost_usd=0.5),
        )


def make(config):
    CALLS.append((config.name, dict(config.options)))
    return Echo(config.options.get("greeting", "hi"))


def broken(config):
    raise RuntimeError("no licence file")
"""


@pytest.fixture
def servers() -> Iterator[tuple[FakeServer, FakeServer]]:
    pair = (FakeServer(), FakeServer())
    threads = [threading.Thread(target=s.httpd.serve_forever, daemon=True) for s in pair]
    for t in threads:
        t.start()
    yield pair
    for s in pair:
        s.stop()


def write(tmp_path: Path, providers: list[dict[str, Any]], name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"providers": providers}))
    return path


def with_file(settings: Settings, path: Path | None, **more: Any) -> Settings:
    return settings.replace(providers={"file": path, **more})


def ask(text: str, model: str = "m") -> ProviderRequest:
    return ProviderRequest(model=model, messages=[Message(role="user", content=text)])


async def test_two_named_endpoints_each_with_its_own_key(
    settings: Settings, tmp_path: Path, servers: tuple[FakeServer, FakeServer]
) -> None:
    local, cloud = servers
    path = write(tmp_path, [
        {"name": "local", "base_url": local.base_url, "api_key_env": "LOCAL_KEY",
         "answer_level": "redacted", "prices": {"default": {"input": 0, "output": 0}}},
        {"name": "openai", "base_url": cloud.base_url, "api_key_env": "CLOUD_KEY",
         "prices": {"models": {"gpt-test": {"input": 2.5, "output": 10}}}},
    ])  # fmt: skip
    env = {"LOCAL_KEY": "local-secret", "CLOUD_KEY": "cloud-secret"}
    loaded = load_providers(with_file(settings, path), environ=env)
    assert {"local", "openai", "scripted"} <= set(loaded.providers)
    local.replies.append(Canned(body=completion({"content": "from local"})))
    cloud.replies.append(Canned(body=completion({"content": "from cloud"})))
    assert (await loaded.providers["local"].complete(ask("hi", "llama3"))).content == "from local"
    assert (await loaded.providers["openai"].complete(ask("hi", "gpt-test"))).content == (
        "from cloud"
    )
    assert local.seen[0].headers["authorization"] == "Bearer local-secret"
    assert local.seen[0].body["model"] == "llama3"
    assert cloud.seen[0].headers["authorization"] == "Bearer cloud-secret"
    assert loaded.answer_levels == {"local": "redacted"}
    assert loaded.prices["openai"].price("gpt-test") is not None
    assert loaded.prices["openai"].price("other") is None


async def test_an_endpoint_without_a_key_sends_no_authorization(
    settings: Settings, tmp_path: Path, servers: tuple[FakeServer, FakeServer]
) -> None:
    local, _ = servers
    path = write(tmp_path, [{"name": "local", "base_url": local.base_url}])
    loaded = load_providers(with_file(settings, path), environ={})
    local.replies.append(Canned(body=completion({"content": "ok"})))
    await loaded.providers["local"].complete(ask("hi"))
    assert "authorization" not in local.seen[0].headers


@pytest.mark.parametrize("env", [{}, {"CLOUD_KEY": ""}, {"CLOUD_KEY": "  "}])
def test_an_unknown_or_empty_key_variable_is_a_config_error(
    settings: Settings, tmp_path: Path, env: dict[str, str]
) -> None:
    path = write(tmp_path, [{"name": "cloud", "base_url": "http://127.0.0.1:9/v1",
                             "api_key_env": "CLOUD_KEY"}])  # fmt: skip
    with pytest.raises(ConfigError) as info:
        load_providers(with_file(settings, path), environ=env)
    assert "CLOUD_KEY" in str(info.value) and "'cloud'" in str(info.value)


@pytest.mark.parametrize(
    ("entries", "needle"),
    [
        ([{"name": "a", "base_url": "http://x"}, {"name": "a", "base_url": "http://y"}],
         "more than once"),
        ([{"name": "scripted", "base_url": "http://x"}], "defined twice"),
        ([{"name": "nowhere"}], "no base_url or factory"),
        ([{"name": "scripted", "options": {"x": 1}}], "takes no options"),
        ([{"name": "a", "base_url": "http://x", "factory": "m:f"}], "not both"),
        ([{"name": "a:b", "base_url": "http://x"}], "name"),
        ([{"name": "a", "base_url": "http://x", "prices": {"default": {"input": -1,
                                                                      "output": 0}}}], "input"),
        ([{"name": "a", "factory": "no_such_module_xyz:make"}], "cannot be loaded"),
        ([{"name": "a", "base_url": "http://x", "api_key": "sk-inline"}], "api_key"),
    ],
)  # fmt: skip
def test_bad_provider_files_are_config_errors(
    settings: Settings, tmp_path: Path, entries: list[dict[str, Any]], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_providers(with_file(settings, write(tmp_path, entries)), environ={})


def test_legacy_openai_settings_still_work_and_clash_with_the_file(
    settings: Settings, tmp_path: Path
) -> None:
    legacy = with_file(settings, None, openai_api_key=SecretStr("sk-legacy"),
                       provider_answer_levels="openai=metadata")  # fmt: skip
    loaded = load_providers(legacy, environ={})
    assert "openai" in loaded.providers and loaded.answer_levels == {"openai": "metadata"}
    # Both level sources naming a provider: the stricter wins.
    path = write(tmp_path, [{"name": "scripted", "answer_level": "redacted"}])
    both = with_file(settings, path, provider_answer_levels="scripted=none")
    assert load_providers(both, environ={}).answer_levels == {"scripted": "none"}
    clash = write(tmp_path, [{"name": "openai", "base_url": "http://x"}], "c.yaml")
    with pytest.raises(ConfigError, match="defined twice"):
        load_providers(with_file(legacy, clash), environ={})
    with pytest.raises(ConfigError, match="empty"):
        load_providers(with_file(settings, None, openai_api_key=SecretStr("")), environ={})


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real installed distribution: a dist-info with entry_points.txt on sys.path."""
    site = tmp_path / "site"
    dist = site / "agentrt_echo_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentrt-echo-plugin\n"
                                   "Version: 1.0\n")  # fmt: skip
    (dist / "entry_points.txt").write_text("[agentrt.providers]\necho = agentrt_echo_plugin:make\n")
    (site / "agentrt_echo_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(__import__("sys").modules, "agentrt_echo_plugin", raising=False)
    return site


async def test_an_entry_point_provider_gets_its_options_prices_and_level(
    settings: Settings, tmp_path: Path, plugin: Path
) -> None:
    path = write(tmp_path, [{"name": "echo", "options": {"greeting": "hello"},
                             "answer_level": "redacted",
                             "prices": {"default": {"input": 1, "output": 1}}}])  # fmt: skip
    loaded = load_providers(with_file(settings, path), environ={})
    import agentrt_echo_plugin  # type: ignore[import-not-found]

    assert agentrt_echo_plugin.CALLS == [("echo", {"greeting": "hello"})]
    reply = await loaded.providers["echo"].complete(ask("ping", "v1"))
    assert isinstance(reply, ProviderReply) and reply.content == "hello from v1: ping"
    assert loaded.answer_levels["echo"] == "redacted" and "echo" in loaded.prices
    # Without a file entry the plug-in loads too, with no options.
    assert "echo" in load_providers(with_file(settings, None), environ={}).providers


def test_a_plugin_named_like_another_provider_is_refused_before_it_runs(
    settings: Settings, plugin: Path
) -> None:
    (plugin / "agentrt_echo_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[agentrt.providers]\nscripted = agentrt_echo_plugin:make\n"
    )
    with pytest.raises(ConfigError, match="defined twice"):
        load_providers(settings, environ={})
    assert "agentrt_echo_plugin" not in __import__("sys").modules  # the factory never ran


def test_a_failing_plugin_or_factory_is_one_config_error(
    settings: Settings, tmp_path: Path, plugin: Path
) -> None:
    path = write(tmp_path, [{"name": "lic", "factory": "agentrt_echo_plugin:broken"}])
    with pytest.raises(ConfigError, match=r"'lic'.*failed to start: RuntimeError: no licence"):
        load_providers(with_file(settings, path), environ={})
    path = write(tmp_path, [{"name": "notprov", "factory": "agentrt_echo_plugin:CALLS"}], "n.yaml")
    with pytest.raises(ConfigError, match="not callable"):
        load_providers(with_file(settings, path), environ={})


def test_code_providers_replace_the_scripted_default_but_not_configured_ones(
    settings: Settings, tmp_path: Path
) -> None:
    mine = ScriptedProvider.from_file(settings.providers.rules_file)
    loaded = load_providers(settings, extra={"scripted": mine}, environ={})
    assert loaded.providers["scripted"] is mine
    path = write(tmp_path, [{"name": "cloud", "base_url": "http://x"}])
    with pytest.raises(ConfigError, match="defined twice"):
        load_providers(with_file(settings, path), extra={"cloud": mine}, environ={})


def test_budget_zero_and_unpriced_cost_budget_are_config_errors(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text(yaml.safe_dump({"profiles": [
        {"name": "p", "model": "scripted:demo", "budget": {"max_tokens": 0}}]}))  # fmt: skip
    with pytest.raises(ConfigError, match="max_tokens"):
        load_profiles(profiles)
    profiles.write_text(yaml.safe_dump({"profiles": [
        {"name": "p", "model": "cheap:demo", "fallback_model": "dear:big",
         "budget": {"max_cost_usd": 1.0}}]}))  # fmt: skip
    loaded = load_profiles(profiles)
    prices = load_providers_prices({"cheap": {"default": {"input": 1, "output": 1}}})
    with pytest.raises(ConfigError, match="'dear:big' has no price"):
        check_budgets(loaded.values(), prices)
    prices = load_providers_prices(
        {
            "cheap": {"default": {"input": 1, "output": 1}},
            "dear": {"models": {"big": {"input": 5, "output": 5}}},
        }
    )
    check_budgets(loaded.values(), prices)  # priced: accepted


def load_providers_prices(raw: dict[str, Any]) -> dict[str, Any]:
    from agentrt.contracts.pricing import PriceTable

    return {name: PriceTable.model_validate(table) for name, table in raw.items()}
