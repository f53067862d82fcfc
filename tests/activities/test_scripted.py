"""The scripted provider and the worker's config files: typed errors on bad input."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from agentrt.activities.providers._templates import TemplateSyntaxError, parse, render
from agentrt.activities.providers.scripted import (
    DEFAULT_REPLY,
    SYNTHESIS_REPLY,
    RuleSet,
    ScriptedProvider,
    load_rules,
)
from agentrt.contracts.approval import denial_note, is_denial
from agentrt.contracts.errors import ConfigError, ErrorType, RulesFileError
from agentrt.contracts.messages import Message, ProviderRequest, ToolSpec
from agentrt.core.profiles import load_profiles

ROOT = Path(__file__).resolve().parents[2]

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


def _refuses(load: Callable[[Path], object], error: type[Exception], path: Path, body: str) -> None:
    """A config file holding `body` is refused by its loader with its typed error."""
    path.write_text(body)
    with pytest.raises(error):
        load(path)


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
    _refuses(load_rules, RulesFileError, tmp_path / "rules.yaml", body)


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
    _refuses(load_profiles, ConfigError, tmp_path / "profiles.yaml", body)


def test_the_shipped_config_files_load() -> None:
    assert "support" in load_profiles(ROOT / "workers" / "profiles.yaml")
    assert load_rules(ROOT / "workers" / "demo_rules.yaml").rules


@pytest.mark.parametrize(
    "path",
    ["tests/fixtures/rules.yaml", "tests/api/fixtures/rules.yaml", "bench/rules.yaml"],
)
def test_every_rules_file_in_the_repository_still_loads(path: str) -> None:
    assert load_rules(ROOT / path).rules


# --- conversation-following rules -------------------------------------------------------

LOOKUP = '{"order_id": "7", "total_cents": 1250, "status": "delivered"}'


def _tool(content: str, tool: str = "lookup_order", error: bool = False) -> Message:
    return Message(role="tool", content=content, tool_name=tool, tool_call_id="c", is_error=error)


def _conv(prompt: str, *later: Message, round: int | None = None) -> ProviderRequest:
    messages = [Message(role="system", content="sys"), Message(role="user", content=prompt)]
    for m in later:
        messages += [Message(role="assistant", content=""), m]
    return ProviderRequest(model="m", messages=messages, tools=SPEC, round=round or 1 + len(later))


FOLLOW = RuleSet.model_validate(
    {
        "rules": [
            {
                "name": "denied",
                "match": {"regex": r"order (?P<id>\d+)", "result": {"denied": True}},
                "reply": {"text": "not done for {prompt.id}: {result.text}"},
            },
            {
                "name": "error",
                "match": {"result": {"error": True, "tool": "lookup_order"}},
                "reply": {"text": "lookup failed"},
            },
            {
                "name": "found",
                "match": {
                    "regex": r"order (?P<id>\d+)",
                    "result": {"regex": r'"total_cents": (?P<cents>\d+)', "error": False},
                },
                "reply": {
                    "text": "{{ok}} {prompt.id}",
                    "tool_calls": [
                        {
                            "name": "refund",
                            "arguments": {
                                "order_id": "{prompt.id}",
                                "amount_cents": "{result.cents:int}",
                                "memo": "order {prompt.id} for {result.cents:int} cents",
                                "nested": [{"id": "{prompt.id}"}, 3, True],
                            },
                        }
                    ],
                },
            },
            {"name": "other-result", "match": {"result": {}}, "reply": {"text": "some result"}},
            {
                "name": "start",
                "match": {"regex": r"order (?P<id>\d+)", "latest": "user"},
                "reply": {"tool_calls": [{"name": "lookup", "arguments": {"id": "{prompt.id}"}}]},
            },
        ]
    }
)


async def test_a_rule_fills_arguments_from_the_prompt_and_the_latest_result() -> None:
    p = ScriptedProvider(FOLLOW)
    first = await p.complete(_conv("refund order 7 please"))
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("lookup", {"id": "7"})]
    second = await p.complete(_conv("refund order 7 please", _tool(LOOKUP)))
    assert second.content == "{ok} 7"
    assert second.tool_calls[0].arguments == {
        "order_id": "7",
        "amount_cents": 1250,  # ':int' alone makes a JSON integer
        "memo": "order 7 for 1250 cents",
        "nested": [{"id": "7"}, 3, True],
    }


async def test_rules_tell_a_denial_from_an_error_from_a_plain_result() -> None:
    p = ScriptedProvider(FOLLOW)
    denial = _tool(denial_note("bob", "too much"), tool="refund", error=True)
    assert is_denial(denial)
    assert (await p.complete(_conv("order 7", denial))).content == (
        "not done for 7: Denied by bob: too much"
    )
    refused = _tool("Tool 'lookup_order' is not available to this agent.", error=True)
    assert not is_denial(refused)
    assert (await p.complete(_conv("order 7", refused))).content == "lookup failed"
    # A successful result that does not match the regex falls through to the next rule.
    assert (await p.complete(_conv("order 7", _tool("No order 7.")))).content == "some result"
    # A tool error is not matched by `error: false`, nor a non-lookup error by `tool:`.
    other = _tool("boom", tool="refund", error=True)
    assert (await p.complete(_conv("order 7", other))).content == "some result"
    # `result` needs the latest message to be a tool result: a later user turn is not.
    later = Message(role="user", content="and now?")
    assert (await p.complete(_conv("order 7", _tool(LOOKUP), later))).tool_calls[0].name == (
        "lookup"
    )


def _rules(rule: dict[str, Any]) -> ScriptedProvider:
    return ScriptedProvider(RuleSet.model_validate({"rules": [rule]}))


@pytest.mark.parametrize(
    ("result", "why"),
    [
        ('{"a": 1}', "captured nothing"),  # the optional group did not take part
        ('{"cents": }', "empty string"),
        ('{"cents": x1}', "not an integer"),
    ],
)
async def test_a_capture_the_conversation_does_not_fill_is_a_provider_error(
    result: str, why: str
) -> None:
    p = _rules(
        {
            "name": "pay",
            "match": {"result": {"regex": r'^\{(?:"cents": (?P<cents>\w*))?'}},
            "reply": {"tool_calls": [{"name": "w", "arguments": {"n": "{result.cents:int}"}}]},
        }
    )
    with pytest.raises(ApplicationError) as caught:
        await p.complete(_conv("x", _tool(result)))
    err = caught.value
    assert err.type == ErrorType.PROVIDER_REJECTED and err.non_retryable
    assert "'pay'" in err.message and "{result.cents:int}" in err.message and why in err.message


async def test_the_final_answer_is_a_template_too() -> None:
    p = _rules(
        {
            "match": {"regex": "order (?P<id>[0-9]+)"},
            "reply": {"tool_calls": [{"name": "t", "arguments": {"id": "{prompt.id}"}}]},
            "final": "gave up on {prompt.id}",
        }
    )
    reply = await p.complete(_req("order 12", tools=None))
    assert reply.tool_calls == [] and reply.content == "gave up on 12"


def test_templates_parse_literals_and_placeholders() -> None:
    assert parse("plain") == ("plain",)
    assert parse("") == ()
    assert render("{{x}} {prompt.a}{{", {"prompt": {"a": "1"}}) == "{x} 1{"
    assert render(5, {}) == 5
    for bad in ("{", "}", "a { b", "{prompt}", "{x.y}", "{prompt.a:float}", "{prompt.a.b}"):
        with pytest.raises(TemplateSyntaxError):
            parse(bad)


@pytest.mark.parametrize(
    "body",
    [
        "rules: [{match: {contains: x, colour: red}, reply: {text: a}}]",  # unknown match field
        "rules: [{match: {result: {tool: t, eror: true}}, reply: {text: a}}]",  # misspelt field
        "rules: [{reply: {text: a, tools: []}}]",  # unknown reply field
        "rules: [{reply: {tool_calls: [{name: t, args: {}}]}}]",  # unknown call field
        "rules: [{reply: {text: a}}]\nfallback: b",  # unknown top-level field
        "rules: [{match: {latest: assistant}, reply: {text: a}}]",
        "rules: [{match: {result: {regex: '[a'}}, reply: {text: a}}]",  # bad result regex
        "rules: [{match: {result: {regex: '(?P<text>a)'}}, reply: {text: a}}]",  # reserved
        "rules: [{match: {regex: '(?P<id>a)'}, reply: {text: '{prompt.idd}'}}]",  # unknown group
        "rules: [{match: {regex: a}, reply: {text: '{prompt.id}'}}]",  # regex has no groups
        "rules: [{reply: {text: '{result.text}'}}]",  # no `result` in the match
        "rules: [{match: {result: {}}, reply: {text: '{result.cents}'}}]",  # no such group
        "rules: [{match: {regex: '(?P<id>a)'}, steps: [{text: ok}, {text: '{prompt.x}'}]}]",
        "rules: [{match: {regex: '(?P<id>a)'}, reply: {text: a}, final: '{prompt.x}'}]",
        "rules: [{reply: {tool_calls: [{name: t, arguments: {a: [{b: '{prompt.x}'}]}}]}}]",
        "rules: [{reply: {text: 'a {b'}}]",  # unmatched brace
        "rules: [{reply: {text: '{user.name}'}}]",  # unknown source
    ],
)
def test_a_bad_rule_is_a_typed_error_at_load(tmp_path: Path, body: str) -> None:
    _refuses(load_rules, RulesFileError, tmp_path / "rules.yaml", body)


def test_a_load_error_names_the_rule_and_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "rules: [{name: pay, match: {regex: '(?P<id>a)'}, reply: {text: '{prompt.ix}'}}]"
    )
    with pytest.raises(RulesFileError, match=r"rule 'pay': \{prompt\.ix\} is not captured.*id"):
        load_rules(path)


# --- the shipped demo rules, conversation by conversation ---------------------------------

DEMO = ScriptedProvider.from_file(ROOT / "workers" / "demo_rules.yaml")


async def test_the_demo_refunds_the_order_the_prompt_names() -> None:
    prompt = "Please refund order 7, it arrived broken."
    first = await DEMO.complete(_conv(prompt))
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("lookup_order", {"order_id": "7"})
    ]
    second = await DEMO.complete(_conv(prompt, _tool(LOOKUP)))
    (refund,) = second.tool_calls
    assert refund.name == "issue_refund"
    assert refund.arguments == {"order_id": "7", "amount_cents": 1250, "memo": "customer request"}
    done = _tool("Refund #3 of 1250 cents recorded for order 7.", tool="issue_refund")
    third = await DEMO.complete(_conv(prompt, _tool(LOOKUP), done))
    assert third.tool_calls == [] and "order 7 was refunded" in third.content


async def test_the_demo_says_a_denied_refund_was_not_made() -> None:
    prompt = "Please refund order 1042"
    denial = _tool(denial_note("bob", None), tool="issue_refund", error=True)
    answer = await DEMO.complete(_conv(prompt, _tool(LOOKUP), denial))
    assert answer.tool_calls == []
    assert "did not refund order 1042" in answer.content and "Denied by bob" in answer.content
    assert "was refunded" not in answer.content


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (_tool("No order 999."), "could not find order 999"),
        (_tool("Invalid arguments for lookup_order: x", error=True), "stopped without refunding"),
        (_tool("Tool failed.", tool="issue_refund", error=True), "did not go through"),
    ],
)
async def test_the_demo_reports_a_refund_it_could_not_make(result: Message, expected: str) -> None:
    answer = await DEMO.complete(_conv("Refund order 999", result))
    assert answer.tool_calls == [] and expected in answer.content
    assert "was refunded" not in answer.content


async def test_the_demo_asks_which_order_and_answers_lookups_truthfully() -> None:
    assert "Which order" in (await DEMO.complete(_conv("refund it"))).content
    question = "What is the status of order 1043?"
    assert (await DEMO.complete(_conv(question))).tool_calls[0].arguments == {"order_id": "1043"}
    found = '{"order_id": "1043", "total_cents": 1250, "status": "shipped"}'
    assert (await DEMO.complete(_conv(question, _tool(found)))).content == (
        "Order 1043 is shipped; its total is 1250 cents."
    )
    missing = await DEMO.complete(_conv(question, _tool("No order 1043.")))
    assert missing.content == "I could not find order 1043."
