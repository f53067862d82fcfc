"""The scripted model provider: the embedded default and the test double.

A rules file (YAML or JSON) lists rules; the first whose `match` fits the conversation
answers, with text, with tool calls, or with a multi-step script (step n answers round n;
the last step repeats). Unknown input gets the polite default answer.

A match can look at the prompt (`contains`, `regex`), the latest message (`last_contains`,
`latest`: who spoke last) and the latest tool result (`result`: its tool, whether it is an
error or an approval denial, a regex). Replies are templates (see `_templates`) filled
from the named groups of `regex` (`{prompt.NAME}`) and of `result.regex`
(`{result.NAME}`, `{result.text}`). Every model forbids unknown fields, and every regex
and placeholder is checked when the file loads.
"""

import asyncio
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator
from temporalio.exceptions import ApplicationError

from agentrt.activities.ports import Emit
from agentrt.activities.providers._templates import Captures, TemplateError, refs, render
from agentrt.contracts.approval import is_denial
from agentrt.contracts.errors import ErrorType, RulesFileError
from agentrt.contracts.linear import LinearPattern, NotLinearError, linear
from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest, ToolCall, Usage
from agentrt.contracts.strict import Strict
from agentrt.core.yaml_file import load_yaml

DEFAULT_REPLY = "I'm sorry, I don't have an answer for that. Could you rephrase?"
SYNTHESIS_REPLY = "I stopped before finishing: I reached the limit of steps for this run."
RESULT_TEXT = "text"  # the capture holding the whole tool result


class ScriptedProviderError(RuntimeError):
    """A scripted failure (rule `error:`), for fallback and outage tests."""


def _compiled(pattern: str | None) -> LinearPattern | None:
    """RE2, as every pattern over user text: a rule's time is linear in the prompt."""
    if pattern is None:
        return None
    try:
        return linear(pattern)
    except NotLinearError as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


class ScriptedCall(Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Reply(Strict):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    input_required: bool = False  # end the turn asking the user for more information
    error: str | None = None  # fail the call, as a provider outage would


class ResultMatch(Strict):
    """Conditions on the latest message, which must be a tool result."""

    tool: str | None = None  # the tool that answered
    error: bool | None = None  # the result is an error (a denial is an error too)
    denied: bool | None = None  # the result is an operator's denial of the call
    regex: str | None = None  # searched in the result; named groups are {result.NAME}

    @model_validator(mode="after")
    def _regex_compiles(self) -> "ResultMatch":
        pattern = _compiled(self.regex)
        if pattern is not None and RESULT_TEXT in pattern.group_names():
            raise ValueError(f"result regex group name {RESULT_TEXT!r} is reserved")
        return self


class Match(Strict):
    contains: str | None = None  # in the first user message, case-insensitive
    regex: str | None = None  # searched in the first user message; groups are {prompt.NAME}
    last_contains: str | None = None  # in the latest message (e.g. a tool result)
    latest: Literal["user", "tool"] | None = None  # the role of the latest message
    result: ResultMatch | None = None
    round: int | None = None
    model: str | None = None  # the model part of the reference (scripted:<model>)

    @model_validator(mode="after")
    def _regex_compiles(self) -> "Match":
        _compiled(self.regex)
        return self

    def captures(self) -> dict[str, set[str]]:
        """The capture names this match can fill, by source."""
        prompt = _compiled(self.regex)
        result = _compiled(self.result.regex) if self.result is not None else None
        return {
            "prompt": prompt.group_names() if prompt is not None else set(),
            "result": (
                {RESULT_TEXT, *(result.group_names() if result is not None else ())}
                if self.result is not None
                else set()
            ),
        }


class Rule(Strict):
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

    @model_validator(mode="after")
    def _references_are_captured(self) -> "Rule":
        known = self.match.captures()
        replies = [self.reply] if self.reply is not None else list(self.steps or [])
        templates: list[Any] = [self.final or ""]
        for r in replies:
            templates += [r.text, *(c.arguments for c in r.tool_calls)]
        for ref in (ref for t in templates for ref in refs(t)):
            if ref.name not in known[ref.source]:
                where = "regex" if ref.source == "prompt" else "result"
                offered = ", ".join(sorted(known[ref.source]))
                why = f"it captures {offered}" if offered else f"no {where!r} capture in the match"
                raise ValueError(
                    f"rule {self.name!r}: {ref} is not captured by the match's {where!r} ({why})"
                )
        return self


class RuleSet(Strict):
    default_reply: str = DEFAULT_REPLY
    rules: list[Rule] = Field(default_factory=list)


def load_rules(path: Path) -> RuleSet:
    return load_yaml(path, RuleSet, "rules file", error=RulesFileError)


def _first_user(messages: list[Message]) -> str:
    return next((m.content for m in messages if m.role == "user"), "")


def _result_captures(r: ResultMatch, latest: Message | None) -> dict[str, str | None] | None:
    if latest is None or latest.role != "tool":
        return None
    if r.tool is not None and latest.tool_name != r.tool:
        return None
    if r.error is not None and latest.is_error != r.error:
        return None
    if r.denied is not None and is_denial(latest) != r.denied:
        return None
    found: dict[str, str | None] = {RESULT_TEXT: latest.content}
    if r.regex is not None:
        groups = linear(r.regex).captures(latest.content)
        if groups is None:
            return None
        found.update(groups)
    return found


def _matches(m: Match, request: ProviderRequest) -> Captures | None:
    """The captures of `m` on this conversation, or None when it does not fit."""
    first = _first_user(request.messages)
    latest = request.messages[-1] if request.messages else None
    last = latest.content if latest is not None else ""
    captures: dict[str, dict[str, str | None]] = {}
    if m.contains is not None and m.contains.lower() not in first.lower():
        return None
    if m.regex is not None:
        found = linear(m.regex).captures(first)
        if found is None:
            return None
        captures["prompt"] = found
    if m.last_contains is not None and m.last_contains.lower() not in last.lower():
        return None
    if m.latest is not None and (latest is None or latest.role != m.latest):
        return None
    if m.result is not None:
        result = _result_captures(m.result, latest)
        if result is None:
            return None
        captures["result"] = result
    if m.model is not None and m.model != request.model:
        return None
    if m.round is not None and m.round != request.round:
        return None
    return captures


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


# A word and the spaces after it: the scripted model streams a chunk per word.
_CHUNKS = re.compile(r"\S+\s*|\s+")


class ScriptedProvider:
    """`pace`: stream replies a word at a time, this many seconds apart (None: no
    streaming, the reply comes whole as before)."""

    def __init__(self, rules: RuleSet, *, pace: float | None = None) -> None:
        self._rules = rules
        self._pace = pace

    @property
    def streaming(self) -> bool:
        return self._pace is not None

    @classmethod
    def from_file(cls, path: Path, *, pace: float | None = None) -> "ScriptedProvider":
        return cls(load_rules(path), pace=pace)

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        reply = await self.complete(request)
        for i, chunk in enumerate(_CHUNKS.findall(reply.content)):
            if i and self._pace:
                await asyncio.sleep(self._pace)
            await emit(chunk)
        return reply

    def _answer(self, request: ProviderRequest) -> tuple[Rule | None, Reply, Captures]:
        for rule in self._rules.rules:
            captures = _matches(rule.match, request)
            if captures is None:
                continue
            if rule.steps is not None:
                return rule, rule.steps[min(request.round, len(rule.steps)) - 1], captures
            assert rule.reply is not None
            return rule, rule.reply, captures
        return None, Reply(text=self._rules.default_reply), {}

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        rule, reply, captures = self._answer(request)
        if reply.error is not None:
            raise ScriptedProviderError(reply.error)
        try:
            if request.tools is None and reply.tool_calls:
                calls: list[ToolCall] = []
                final = rule.final if rule is not None else None
                text = render(final, captures) if final else SYNTHESIS_REPLY
            else:
                calls = [
                    ToolCall(
                        call_id=f"call_{i}", name=c.name, arguments=render(c.arguments, captures)
                    )
                    for i, c in enumerate(reply.tool_calls, start=1)
                ]
                text = render(reply.text, captures) if rule is not None else reply.text
        except TemplateError as exc:
            # The rules cannot answer this conversation; a retry would answer the same.
            name = rule.name if rule is not None else ""
            raise ApplicationError(
                f"scripted rule {name!r}: {exc}",
                type=ErrorType.PROVIDER_REJECTED,
                non_retryable=True,
            ) from None
        prompt = sum(_tokens(m.content) for m in request.messages)
        completion = _tokens(text) + 5 * len(calls)
        finish = "tool_calls" if calls else "stop"
        if request.max_tokens is not None and completion > request.max_tokens:
            # As a provider does at its bound: the reply is cut there, its calls with it.
            text, calls, finish = text[: request.max_tokens * 4], [], "length"
            completion = request.max_tokens
        return ProviderReply(
            content=text,
            tool_calls=calls,
            finish_reason=finish,
            input_required=reply.input_required and not calls,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
        )
