"""The scripted provider and the worker's config files: typed errors on bad input."""

from pathlib import Path

import pytest

from agentrt.activities.providers.scripted import (
    DEFAULT_REPLY,
    SYNTHESIS_REPLY,
    RuleSet,
    ScriptedProvider,
    load_rules,
)
from agentrt.contracts.errors import ConfigError, RulesFileError
from agentrt.contracts.messages import Message, ProviderRequest, ToolSpec
from agentrt.core.profiles import load_profiles

SPEC = [ToolSpec(name="t", description="d")]


def _req(text: str, round: int = 1, tools: list[ToolSpec] | None = SPEC) -> ProviderRequest:
    return ProviderRequest(
        model="m", messages=[Message(role="user", content=text)], tools=tools, round=round
    )


RULES = RuleSet.model_validate(
    {
        "rules": [
            {
                "match": {"contains": "refund"},
                "steps": [{"tool_calls": [{"name": "t", "arguments": {"a": 1}}]}, {"text": "done"}],
                "final": "stopped",
            },
            {"match": {"regex": r"order \d+", "round": 1}, "reply": {"text": "order!"}},
        ]
    }
)


async def test_rules_answer_by_match_and_round() -> None:
    p = ScriptedProvider(RULES)
    first = await p.complete(_req("please REFUND it"))
    assert [c.name for c in first.tool_calls] == ["t"] and first.tool_calls[0].arguments == {"a": 1}
    assert (await p.complete(_req("refund", round=2))).content == "done"
    assert (await p.complete(_req("refund", round=7))).content == "done"  # last step repeats
    assert (await p.complete(_req("about order 12"))).content == "order!"
    assert (await p.complete(_req("about order 12", round=2))).content == DEFAULT_REPLY
    assert (await p.complete(_req("hello"))).content == DEFAULT_REPLY


async def test_without_tools_a_tool_step_becomes_the_final_text() -> None:
    p = ScriptedProvider(RULES)
    reply = await p.complete(_req("refund", tools=None))
    assert reply.tool_calls == [] and reply.content == "stopped"
    bare = ScriptedProvider(
        RuleSet.model_validate({"rules": [{"reply": {"tool_calls": [{"name": "t"}]}}]})
    )
    assert (await bare.complete(_req("x", tools=None))).content == SYNTHESIS_REPLY


@pytest.mark.parametrize(
    "body",
    [
        "rules: [",  # does not parse
        "rules: [{match: {contains: x}}]",  # neither reply nor steps
        "rules: [{reply: {text: a}, steps: [{text: b}]}]",  # both
        "rules: [{match: {regex: '('}, reply: {text: a}}]",  # bad regex
        "rules: 5",
    ],
)
def test_a_bad_rules_file_is_a_typed_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(body)
    with pytest.raises(RulesFileError):
        load_rules(path)


def test_a_missing_rules_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(RulesFileError):
        load_rules(tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    "body",
    [
        "profiles: [{name: a}]",  # no model
        "profiles: [{name: a, model: nocolon}]",
        "profiles: [{name: a, model: 'x:y'}, {name: a, model: 'x:y'}]",
        "profiles: [",
    ],
)
def test_a_bad_profiles_file_is_a_typed_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError):
        load_profiles(path)


def test_the_shipped_config_files_load() -> None:
    root = Path(__file__).resolve().parents[2]
    assert "support" in load_profiles(root / "workers" / "profiles.yaml")
    assert load_rules(root / "workers" / "demo_rules.yaml").rules
