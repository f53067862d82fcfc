"""Issue 28: every file a deployment writes (profiles, providers, MCP servers, scripted
rules) refuses an unknown key at load, in one line naming the key, the file and the closest
valid key, so a misspelling never silently drops the control it meant to set."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrt.activities.providers.scripted import load_rules
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.strict import unknown_keys
from agentrt.core.profiles import load_profiles
from agentrt.workers.providers_file import read_providers_file

PROFILE = "profiles:\n  - {name: support, model: 'scripted:demo', %s}\n"
PROVIDER = "providers:\n  - {name: local, base_url: 'http://127.0.0.1:1/v1', %s}\n"
MCP = "servers:\n  - {name: crm, transport: http, url: 'http://127.0.0.1:1/mcp', %s}\n"
RULE = "rules:\n  - {name: r, reply: {text: hi}, %s}\n"

# fmt: off
CASES: list[tuple[Callable[[Path], Any], str, str, str]] = [
    # (loader, file text, the key as named, its closest valid key)
    (load_profiles, PROFILE % "aproval: none", "aproval", "approval"),
    (load_profiles, PROFILE % "four_eye: true", "four_eye", "four_eyes"),
    (load_profiles, PROFILE % "timeouts: {tool_second: 3}", "timeouts.tool_second",
     "timeouts.tool_seconds"),
    (load_profiles, PROFILE % "guardrails: {deny_pattern: [x]}", "guardrails.deny_pattern",
     "guardrails.deny_patterns"),
    (load_profiles, PROFILE % "budget: {max_cost: 1}", "max_cost", "max_cost_usd"),
    (read_providers_file, PROVIDER % "api_key: X", "api_key", "api_key_env"),
    (read_providers_file, PROVIDER % "prices: {default: {input: 1, outptu: 2}}", "outptu",
     "output"),
    (load_mcp_config, MCP % "header_from_env: {A: B}", "header_from_env", "headers_from_env"),
    (load_mcp_config, MCP % "timeout: 3", "timeout", "timeout_seconds"),
    (load_rules, RULE % "match: {contain: x}", "contain", "contains"),
    (load_rules, RULE % "finale: bye", "finale", "final"),
]
# fmt: on


@pytest.mark.parametrize(("load", "text", "key", "closest"), CASES)
def test_an_unknown_key_names_itself_the_file_and_the_closest_key(
    tmp_path: Path, load: Callable[[Path], Any], text: str, key: str, closest: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(path)
    message = str(err.value)
    assert str(path) in message, message
    assert f"unknown key {key} (did you mean {closest}?)" in message, message
    assert "\n" not in message


def test_a_key_like_none_lists_every_known_one_and_several_are_named_at_once() -> None:
    alone = unknown_keys(["zzz"], ["approval", "model"])
    assert alone == "unknown key zzz; known: approval, model"
    both = unknown_keys(["modle", "aproval"], ["approval", "model"])
    assert both == "unknown keys aproval (did you mean approval?), modle (did you mean model?)"
    assert unknown_keys(["model"], ["approval", "model"]) is None
