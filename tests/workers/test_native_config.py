"""The providers file's native entries (`api: anthropic`, `api: gemini`): what they need
(a key variable), what they accept (their own options), and what they build (a provider
on the configured base URL, or the vendor's when none is given)."""

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentrt.activities.providers import anthropic_messages, gemini
from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.workers.providers import load_providers
from agentrt.workers.providers_file import PROVIDERS_FILE_HELP, ProvidersFile
from tests.workers.test_providers import with_file, write

NATIVE = [
    {"name": "claude", "api": "anthropic", "api_key_env": "A_KEY",
     "options": {"max_tokens": 1000}, "prices": {"default": {"input": 3, "output": 15}}},
    {"name": "gem", "api": "gemini", "api_key_env": "G_KEY", "base_url": "http://127.0.0.1:9"},
]  # fmt: skip


def test_native_entries_build_their_providers_with_prices(
    settings: Settings, tmp_path: Path
) -> None:
    loaded = load_providers(
        with_file(settings, write(tmp_path, NATIVE)), environ={"A_KEY": "a", "G_KEY": "g"}
    )
    claude, gem = loaded.providers["claude"], loaded.providers["gem"]
    assert isinstance(claude, anthropic_messages.AnthropicProvider)
    assert isinstance(gem, gemini.GeminiProvider)
    # No base_url: the vendor's own; a given one is used as is.
    assert str(claude._client.base_url).rstrip("/") == anthropic_messages.DEFAULT_BASE_URL
    assert claude._client.max_retries == 0
    assert gem._client._api_client._http_options.base_url == "http://127.0.0.1:9"
    retry = gem._client._api_client._http_options.retry_options
    assert retry is not None and retry.attempts == 1
    assert loaded.prices["claude"].price("any") is not None and "gem" not in loaded.prices


@pytest.mark.parametrize(
    ("entry", "env", "needle"),
    [
        ({"name": "c", "api": "anthropic"}, {}, "needs api_key_env"),
        ({"name": "c", "api": "gemini", "api_key_env": "K"}, {}, "'K', which is not set"),
        ({"name": "c", "api": "anthropic", "api_key_env": "K"}, {"K": " "}, "is empty"),
        ({"name": "c", "api": "anthropic", "api_key_env": "K", "options": {"max_tokens": 0}},
         {"K": "k"}, "max_tokens"),
        ({"name": "c", "api": "gemini", "api_key_env": "K", "options": {"temperature": 1}},
         {"K": "k"}, "temperature"),
        ({"name": "c", "api": "gemini", "api_key_env": "K", "factory": "m:f"}, {"K": "k"},
         "not both"),
        ({"name": "c", "api": "bedrock", "api_key_env": "K"}, {"K": "k"}, "api"),
    ],
)  # fmt: skip
def test_bad_native_entries_are_config_errors(
    settings: Settings, tmp_path: Path, entry: dict[str, Any], env: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_providers(with_file(settings, write(tmp_path, [entry])), environ=env)


def test_the_help_example_is_a_valid_file() -> None:
    ProvidersFile.model_validate(yaml.safe_load(PROVIDERS_FILE_HELP))
