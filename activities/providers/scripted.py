"""The scripted model provider: the embedded default and the test double.

A rules file (YAML or JSON) lists rules; the first whose `match` fits the conversation
answers, with text, with tool calls, or with a multi-step script (step n answers round n;
the last step repeats). Unknown input gets the polite default answer.
"""

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from agentrt.contracts.errors import RulesFileError
from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest, ToolCall, Usage

DEFAULT_REPLY = "I'm sorry, I don't have an answer for that. Could you rephrase?"
SYNTHESIS_REPLY = "I stopped before finishing: I reached the limit of steps for this run."


class ScriptedProviderError(RuntimeError):
    """A scripted failure (rule `error:`), for fallback and outage tests."""


class ScriptedCall(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Reply(BaseModel):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    input_required: bool = False  # end the turn asking the user for more information
    error: str | None = None  # fail the call, as a provider outage would


class Match(BaseModel):
    contains: str | None = None  # in the first user message, case-insensitive
    regex: str | None = None  # searched in the first user message
    last_contains: str | None = None  # in the latest message (e.g. a tool result)
    round: int | None = None
    model: str | None = None  # the model part of the reference (scripted:<model>)

    @model_validator(mode="after")
    def _regex_compiles(self) -> "Match":
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"invalid regex {self.regex!r}: {exc}") from exc
        return self


class Rule(BaseModel):
    name: str = ""
    match: Match = Field(default_factory=Match)
    reply: Reply | None = None
    steps: list[Reply] | None = None
    final: str | None = None  # answer when tools are no longer offered

    @model_validator(mode="after")
    def _one_answer(self) -> "Rule":
        if (self.reply is None) == (self.steps is None):
            raise ValueError(f"rule {self.name!r}: give exactly one of 'reply' or 'steps'")
        if self.steps is not None and not self.steps:
            raise ValueError(f"rule {self.name!r}: 'steps' is empty")
        return self


class RuleSet(BaseModel):
    default_reply: str = DEFAULT_REPLY
    rules: list[Rule] = Field(default_factory=list)


def load_rules(path: Path) -> RuleSet:
    try:
        text = path.read_text()
    except OSError as exc:
        raise RulesFileError(f"cannot read rules file {path}: {exc.strerror}") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise RulesFileError(f"rules file {path} does not parse: {exc}") from exc
    try:
        return RuleSet.model_validate(data or {})
    except ValidationError as exc:
        raise RulesFileError(f"rules file {path} is invalid: {exc}") from exc


def _first_user(messages: list[Message]) -> str:
    return next((m.content for m in messages if m.role == "user"), "")


def _matches(m: Match, request: ProviderRequest) -> bool:
    first = _first_user(request.messages)
    last = request.messages[-1].content if request.messages else ""
    if m.contains is not None and m.contains.lower() not in first.lower():
        return False
    if m.regex is not None and re.search(m.regex, first) is None:
        return False
    if m.last_contains is not None and m.last_contains.lower() not in last.lower():
        return False
    if m.model is not None and m.model != request.model:
        return False
    return m.round is None or m.round == request.round


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedProvider:
    def __init__(self, rules: RuleSet) -> None:
        self._rules = rules

    @classmethod
    def from_file(cls, path: Path) -> "ScriptedProvider":
        return cls(load_rules(path))

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        rule = next((r for r in self._rules.rules if _matches(r.match, request)), None)
        if rule is None:
            reply = Reply(text=self._rules.default_reply)
        elif rule.steps is not None:
            reply = rule.steps[min(request.round, len(rule.steps)) - 1]
        else:
            assert rule.reply is not None
            reply = rule.reply
        if reply.error is not None:
            raise ScriptedProviderError(reply.error)
        calls = [
            ToolCall(call_id=f"call_{i}", name=c.name, arguments=c.arguments)
            for i, c in enumerate(reply.tool_calls, start=1)
        ]
        text = reply.text
        if request.tools is None and calls:
            calls = []
            text = (rule.final if rule is not None and rule.final else None) or SYNTHESIS_REPLY
        prompt = sum(_tokens(m.content) for m in request.messages)
        return ProviderReply(
            content=text,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            input_required=reply.input_required and not calls,
            usage=Usage(prompt_tokens=prompt, completion_tokens=_tokens(text) + 5 * len(calls)),
        )
