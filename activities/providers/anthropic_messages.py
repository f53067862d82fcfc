"""Anthropic's Messages API (POST {base_url}/v1/messages) through the vendor's SDK.

The SDK client is built with max_retries=0, an explicit key and an explicit base URL: one
attempt per call (Temporal's retry policy owns the retries), no credentials or endpoint
read from the SDK's own environment variables, and no request anywhere but the base URL.

Our conversation becomes Messages' shape: the system messages become `system`, a tool
call an assistant `tool_use` block, a tool result a user `tool_result` block (consecutive
results of one turn in one user message, as the API requires). A `refusal` stop is a typed,
non-retryable ProviderRejected; 429 and 529 (overloaded) are retryable ProviderUnavailable.

`stream` asks for the same turn as server-sent events (message_start, content_block_*,
message_delta, message_stop): the text deltas go to `emit` as they come, and the SDK's
accumulator folds the events into the Message `complete` would have returned (tool input
from its JSON fragments, input tokens from message_start, output tokens and the stop
reason from message_delta). An `error` event mid-stream is typed by its error type as the
same error's HTTP status would be; a stream cut before message_stop is retryable.

A typed answer's schema (ProviderRequest.output_schema) is not sent: Messages has no JSON
response mode. The model activity validates the answer and sends an invalid one back.
"""

import json
from typing import Any

import anthropic
from anthropic.types import Message as WireMessage
from pydantic import ValidationError

from agentrt.activities.ports import Emit
from agentrt.activities.providers._http_errors import classify, malformed_reply
from agentrt.activities.providers._native import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_SECONDS,
    Names,
    bounded,
    refused,
    system_text,
    unreachable,
)
from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest, ToolCall, Usage

DEFAULT_BASE_URL = "https://api.anthropic.com"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
           "max_tokens": "length", "model_context_window_exceeded": "length"}  # fmt: skip
# An `error` event comes on a 200 stream: its type stands for the status the same error
# has before a stream starts (Anthropic's documented errors); unknown ones are the server's.
_STREAM_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401,
                        "permission_error": 403, "not_found_error": 404,
                        "request_too_large": 413, "rate_limit_error": 429,
                        "api_error": 500, "overloaded_error": 529}  # fmt: skip


def _blocks(m: Message, names: Names) -> list[dict[str, Any]]:
    # The API refuses empty text blocks: a turn that said nothing beside its calls has none.
    if m.role == "tool":
        return [{
            "type": "tool_result", "tool_use_id": names.calls.wire(m.tool_call_id or ""),
            "content": m.content, "is_error": m.is_error,
        }]  # fmt: skip
    blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    blocks += [
        {"type": "tool_use", "id": names.calls.wire(c.call_id), "name": names.tools.wire(c.name),
         "input": c.arguments}
        for c in m.tool_calls
    ]  # fmt: skip
    return blocks


def _turns(request: ProviderRequest, names: Names) -> list[dict[str, Any]]:
    """The non-system messages as alternating turns: a tool result is the user's, and
    neighbours of one role are merged into one turn."""
    turns: list[dict[str, Any]] = []
    for m in request.messages:
        if m.role == "system" or not (blocks := _blocks(m, names)):
            continue
        role = "assistant" if m.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def request_body(request: ProviderRequest, max_tokens: int, names: Names) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens,
        "messages": _turns(request, names),
    }
    if system := system_text(request):
        body["system"] = system
    if request.tools:  # omitted, not empty, for the last, tool-less round
        body["tools"] = [
            {"name": names.tools.wire(t.name), "description": t.description,
             "input_schema": t.parameters or {"type": "object", "properties": {}}}
            for t in request.tools
        ]  # fmt: skip
    return body


def parse_reply(wire: WireMessage, names: Names, provider: str) -> ProviderReply:
    if wire.stop_reason == "refusal":
        raise refused(provider, "refusal")
    text: list[str] = []
    calls: list[ToolCall] = []
    for block in wire.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(call_id=block.id, name=names.tools.real(block.name),
                                  arguments=arguments))  # fmt: skip
    usage = wire.usage
    prompt = usage.input_tokens + (usage.cache_creation_input_tokens or 0)
    prompt += usage.cache_read_input_tokens or 0  # cached input is input, priced as such
    return ProviderReply(
        content="".join(text),
        tool_calls=calls,
        finish_reason="tool_calls" if calls else _FINISH.get(wire.stop_reason or "", "stop"),
        usage=Usage(prompt_tokens=prompt, completion_tokens=usage.output_tokens),
    )


class AnthropicProvider:
    def __init__(
        self,
        *,
        api_key: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        name: str = "anthropic",
    ) -> None:
        self._name = name
        self._max_tokens = max_tokens
        # One pooled client per provider, reused across turns and runs. Redirects are not
        # followed (the SDK's default does): a request leaves for the base URL only.
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(follow_redirects=False),
        )  # fmt: skip

    async def aclose(self) -> None:
        await self._client.close()

    def _bound(self, request: ProviderRequest) -> int:
        """The request's reply bound (a budget's worst case counts on it), at most ours."""
        return bounded(request, self._max_tokens) or self._max_tokens

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        names = Names(request)
        body = request_body(request, self._bound(request), names)
        try:
            raw = await self._client.post("/v1/messages", body=body, cast_to=object)
        except anthropic.APIStatusError as exc:
            raise self._status(exc) from None
        except anthropic.APIConnectionError as exc:  # timeouts included
            raise unreachable(self._name, exc) from None
        except json.JSONDecodeError:  # a 2xx whose body is not JSON
            raise malformed_reply(self._name, "not JSON") from None
        try:
            wire = WireMessage.model_validate(raw)
        except ValidationError:
            raise malformed_reply(self._name, "not a message") from None
        return parse_reply(wire, names, self._name)

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        """As `complete`, streamed: the text goes to `emit` as it comes."""
        names = Names(request)
        body = request_body(request, self._bound(request), names)
        ended = False
        try:
            async with self._client.messages.stream(**body) as events:
                async for event in events:
                    if event.type == "content_block_delta" and event.delta.type == "text_delta":
                        await emit(event.delta.text)
                    ended = ended or event.type == "message_stop"
                wire = await events.get_final_message() if ended else None
        except anthropic.APIStatusError as exc:
            raise self._status(exc) from None
        except anthropic.APIConnectionError as exc:  # timeouts included
            raise unreachable(self._name, exc) from None
        except (ValueError, RuntimeError, AssertionError):
            # Not JSON, tool input that is not JSON, or events out of order.
            raise malformed_reply(self._name, "not a message stream") from None
        if wire is None:  # no message_stop: the server hung up mid-reply (retried)
            raise unreachable(self._name, ConnectionError("the stream ended before its end"))
        return parse_reply(wire, names, self._name)

    def _status(self, exc: anthropic.APIStatusError) -> Exception:
        r = exc.response
        if r.is_success:  # an `error` event in a stream: the status is the error type's
            error = exc.body.get("error") if isinstance(exc.body, dict) else None
            kind = error.get("type") if isinstance(error, dict) else None
            status = _STREAM_ERROR_STATUS.get(kind if isinstance(kind, str) else "", 500)
            return classify(status, r.headers, json.dumps(exc.body).encode(), self._name)
        return classify(r.status_code, r.headers, r.content, self._name)
