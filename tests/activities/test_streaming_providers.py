"""Streaming providers fold their stream into the reply `complete` gives: the OpenAI
stream's chunks (text, tool calls in fragments, usage last), the scripted model's words."""

from typing import Any

from agentrt.activities.providers.openai_compat import parse_reply
from agentrt.activities.providers.openai_stream import Folded
from agentrt.activities.providers.scripted import Reply, Rule, RuleSet, ScriptedProvider
from agentrt.contracts.messages import Message, ProviderRequest


async def test_openai_chunks_fold_into_the_reply_with_tool_calls_and_usage() -> None:
    chunks: list[Any] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me "}}]},
        {"choices": [{"index": 0, "delta": {"content": "look."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "c1", "function": {"name": "lookup", "arguments": '{"or'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": 'der": 7}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 5}},
    ]  # fmt: skip
    folded, emitted = Folded(), []

    async def emit(text: str) -> None:
        emitted.append(text)

    for c in chunks:
        await folded.add(c, emit)
    reply = parse_reply(folded.body())
    assert emitted == ["Let me ", "look."]
    assert reply.content == "Let me look." and reply.finish_reason == "tool_calls"
    assert [(c.call_id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c1", "lookup", {"order": 7})
    ]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 5)


async def test_the_scripted_model_streams_a_word_at_a_time_when_paced() -> None:
    rules = RuleSet(rules=[Rule(reply=Reply(text="One two  three."))])
    request = ProviderRequest(model="demo", messages=[Message(role="user", content="hi")])
    emitted: list[str] = []

    async def emit(text: str) -> None:
        emitted.append(text)

    paced = ScriptedProvider(rules, pace=0.001)
    assert paced.streaming and not ScriptedProvider(rules).streaming
    reply = await paced.stream(request, emit)
    assert emitted == ["One ", "two  ", "three."]
    assert reply == await ScriptedProvider(rules).complete(request)
