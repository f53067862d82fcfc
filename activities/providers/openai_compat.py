"""An OpenAI-compatible Chat Completions provider over plain httpx (no vendor SDK).

Works against any server speaking POST {base_url}/chat/completions (OpenAI, vLLM, Ollama,
LiteLLM...). One attempt per call: failures become ApplicationErrors classified in
_http_errors, and Temporal's retry policy owns the retries.

Malformed tool-call arguments from the model do not fail the turn: the call is kept with
arguments {INVALID_ARGUMENTS_KEY: <raw text, truncated>}, so the tool layer answers the
model "invalid arguments" and the model can correct itself on the next round.
"""

import json
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from agentrt.activities.ports import Emit
from agentrt.activities.providers._http_errors import malformed_reply, status_error, transport_error
from agentrt.activities.providers._wire_names import WireNames
from agentrt.activities.providers.openai_stream import Folded, StreamCut, data_lines
from agentrt.contracts.messages import (
    INVALID_ARGUMENTS_KEY,
    Message,
    ProviderReply,
    ProviderRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from agentrt.contracts.provider_errors import malformed_at

PROVIDER_NAME = "openai"
DEFAULT_TIMEOUT_SECONDS = 60.0  # under the model activity's default start-to-close (120 s)
# The marker key for arguments that were not a JSON object. The leading underscores keep
# it out of any sane tool schema, so a schema-validating tool refuses the call.
MAX_RAW_ARGUMENTS_CHARS = 500


# The slice of the wire reply we read; unknown fields are ignored, as servers add many.
class _WireFunction(BaseModel):
    name: str = ""
    # A string by the spec; some compatible servers send the object itself.
    arguments: str | dict[str, Any] | None = None


class _WireToolCall(BaseModel):
    id: str = ""
    function: _WireFunction


class _WireMessage(BaseModel):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[_WireToolCall] | None = None


class _WireChoice(BaseModel):
    message: _WireMessage
    finish_reason: str | None = None


class _WireUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _WireCompletion(BaseModel):
    choices: list[_WireChoice]
    usage: _WireUsage | None = None


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """The model's arguments as a dict; anything but a JSON object becomes the marker."""
    if isinstance(raw, dict):
        return raw
    if raw is None or not raw.strip():
        return {}  # a call without parameters
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):  # nested past the parser's depth: no object either
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {INVALID_ARGUMENTS_KEY: raw[:MAX_RAW_ARGUMENTS_CHARS]}


def wire_names(request: ProviderRequest) -> WireNames:
    """The request's tool names ↔ wire-safe function names (see _wire_names)."""
    seen = [c.name for m in request.messages for c in m.tool_calls]
    return WireNames([t.name for t in request.tools or []], seen)


def _wire_message(m: Message, names: WireNames) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            # The API wants null, not "", beside tool calls when the model said nothing.
            "content": m.content or None,
            "tool_calls": [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": names.wire(c.name), "arguments": json.dumps(c.arguments)},
                }
                for c in m.tool_calls
            ],
        }
    return {"role": m.role, "content": m.content}


def _wire_tool(spec: ToolSpec, names: WireNames) -> dict[str, Any]:
    function: dict[str, Any] = {"name": names.wire(spec.name), "description": spec.description}
    if spec.parameters:  # omitted means "no parameters" to the API
        function["parameters"] = spec.parameters
    return {"type": "function", "function": function}


# OpenAI's own API takes the reply bound as `max_completion_tokens` (its reasoning models
# refuse `max_tokens`); servers that speak its format take `max_tokens`, the older name.
OPENAI_HOST = "api.openai.com"


def bound_key(base_url: str) -> str:
    """The body's key for the reply bound at `base_url`."""
    host = httpx.URL(base_url).host
    return "max_completion_tokens" if host == OPENAI_HOST else "max_tokens"


def request_body(
    request: ProviderRequest, names: WireNames | None = None, bound: str = "max_tokens"
) -> dict[str, Any]:
    """The /chat/completions body. `tools` is omitted when none are offered: the API
    rejects an empty list, and omission is how the last, tool-less round is asked for."""
    names = names or wire_names(request)
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [_wire_message(m, names) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [_wire_tool(t, names) for t in request.tools]
    if request.max_tokens is not None:  # the bound a budget's worst case counts on
        body[bound] = request.max_tokens
    if request.output_schema is not None:
        # Structured output: the API holds the answer to the schema (not `strict`, which
        # accepts only a subset of JSON Schema); the activity validates it either way.
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": request.output_schema},
        }
    return body


def parse_reply(payload: Any, names: WireNames | None = None) -> ProviderReply:
    """A /chat/completions JSON body → ProviderReply, tool names mapped back to ours;
    ValueError (or its subclass ValidationError) when it is not one."""
    names = names or WireNames()
    completion = _WireCompletion.model_validate(payload)
    if not completion.choices:
        raise ValueError("no choices")
    choice = completion.choices[0]
    calls = [
        ToolCall(
            call_id=c.id,
            name=names.real(c.function.name),
            arguments=parse_arguments(c.function.arguments),
        )
        for c in choice.message.tool_calls or []
    ]
    usage = completion.usage or _WireUsage()
    return ProviderReply(
        content=choice.message.content or choice.message.refusal or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason or ("tool_calls" if calls else "stop"),
        usage=Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens),
    )


def _where(exc: ValidationError) -> str:
    """Where the reply was malformed, by its top-level field only: pydantic's messages
    quote input, and a deeper location holds the reply's own keys (the provider's text)."""
    return malformed_at([str(e["loc"][0]) if e["loc"] else "body" for e in exc.errors()])


class OpenAICompatProvider:
    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = "https://api.openai.com/v1",
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        name: str = PROVIDER_NAME,
    ) -> None:
        self._name = name
        self._bound = bound_key(base_url)
        self._secrets = [api_key] if api_key else []
        # One pooled client per provider: connections are reused across turns and runs.
        # httpx masks the Authorization header in reprs, so it never shows in a traceback.
        # No key (a local server that needs none) sends no Authorization header at all.
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            timeout=httpx.Timeout(timeout),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def _refused(self, response: httpx.Response, request: ProviderRequest) -> Exception:
        sent = [*self._secrets, *(m.content for m in request.messages if m.content)]
        return status_error(response, self._name, sent)

    def _parsed(self, body: Any, names: WireNames) -> ProviderReply:
        try:
            return parse_reply(body, names)
        except ValidationError as exc:
            raise malformed_reply(self._name, _where(exc)) from None
        except ValueError:  # no choices
            raise malformed_reply(self._name, "not a chat completion") from None

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        names = wire_names(request)
        try:
            response = await self._client.post(
                "chat/completions", json=request_body(request, names, self._bound)
            )
        except httpx.RequestError as exc:
            raise transport_error(exc, self._name) from None
        if not response.is_success:
            raise self._refused(response, request)
        try:
            body = response.json()
        except ValueError:
            raise malformed_reply(self._name, "not a chat completion") from None
        return self._parsed(body, names)

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        """As `complete`, streamed: the text goes to `emit` as it comes."""
        names = wire_names(request)
        body = request_body(request, names, self._bound)
        body |= {"stream": True, "stream_options": {"include_usage": True}}
        folded = Folded()
        try:
            async with self._client.stream("POST", "chat/completions", json=body) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._refused(response, request)
                async for chunk in data_lines(response.aiter_lines()):
                    await folded.add(chunk, emit)
        except httpx.RequestError as exc:
            raise transport_error(exc, self._name) from None
        except StreamCut:
            # No [DONE]: a server that omits it has still sent its finish reason; with none,
            # the reply was cut mid-way, an outage like a connection lost (retried).
            if folded.finish_reason is None:
                cut = httpx.RemoteProtocolError("the stream ended before its end")
                raise transport_error(cut, self._name) from None
        except ValueError:  # a chunk that is not JSON, or not an object
            raise malformed_reply(self._name, "not a chat completion stream") from None
        return self._parsed(folded.body(), names)
