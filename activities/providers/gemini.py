"""Google's Gemini API (POST {base_url}/v1beta/models/{model}:generateContent) through the
vendor's SDK, google-genai.

The client gets an explicit key, base URL and API version, vertexai=False, our own
httpx client and HttpRetryOptions(attempts=1): one attempt per call (Temporal's retry
policy owns the retries), no credentials, endpoint or Vertex switch read from the SDK's
environment variables, and no request anywhere but the base URL.

Our conversation becomes Gemini's shape: the system messages become `system_instruction`,
a tool call a model `function_call` part, a tool result a user `function_response` part.
A blocked prompt or a safety stop is a typed, non-retryable ProviderRejected; 429 and 503
(overloaded) are retryable ProviderUnavailable.

`stream` asks `:streamGenerateContent?alt=sse`: each event is a GenerateContentResponse
holding the next parts; text parts go to `emit` as they come, and the parts, the last
finish reason and the last (cumulative) usage are folded into the one response `complete`
would have read. An error chunk mid-stream is typed by its code as the same error's
status would be; a stream that ends without a finish reason was cut, and is retried.
"""

import base64
import json
import warnings

import httpx
from google import genai
from google.genai import errors, types

from agentrt.activities.ports import Emit
from agentrt.activities.providers import _native
from agentrt.activities.providers._http_errors import classify, malformed_reply
from agentrt.activities.providers._native import Names, bounded
from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest, ToolCall, Usage
from agentrt.contracts.provider_errors import REFUSALS, block_reason

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
# The stops that are a refusal: the same request would be refused again.
_REFUSALS = REFUSALS - {"refusal"}


def quiet_sdk_warnings() -> None:
    """The SDK warns, on stderr, with an enum value it does not know: the provider's text
    (a block or finish reason of a hostile endpoint can be anything). Never shown. Set
    when a provider is built too: a warnings context the import ran in may have ended."""
    warnings.filterwarnings("ignore", category=UserWarning, module=r"google\.genai\._common")


quiet_sdk_warnings()
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
# Gemini 3 wants each replayed function call to carry the thought signature it came with.
# The transcript keeps calls provider-neutral and has none, so replayed calls carry the
# sentinel Google documents for calls without one (docs: "Thought Signatures"). The field
# is bytes, sent in URL-safe base64: these bytes go on the wire as the sentinel's text.
NO_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")


def _parts(m: Message, names: Names) -> list[types.Part]:
    if m.role == "tool":
        key = "error" if m.is_error else "output"
        return [types.Part(function_response=types.FunctionResponse(
            id=names.calls.wire(m.tool_call_id or ""), name=names.tools.wire(m.tool_name or ""),
            response={key: m.content},
        ))]  # fmt: skip
    parts = [types.Part(text=m.content)] if m.content else []
    parts += [
        types.Part(
            function_call=types.FunctionCall(
                id=names.calls.wire(c.call_id), name=names.tools.wire(c.name), args=c.arguments
            ),
            thought_signature=NO_SIGNATURE,
        )
        for c in m.tool_calls
    ]
    return parts


def contents(request: ProviderRequest, names: Names) -> list[types.Content]:
    """The non-system messages as turns of `user` and `model`, neighbours of one role
    merged (a turn's tool results go back together, as Gemini expects)."""
    turns: list[types.Content] = []
    for m in request.messages:
        if m.role == "system" or not (parts := _parts(m, names)):
            continue
        role = "model" if m.role == "assistant" else "user"
        if turns and turns[-1].role == role:
            turns[-1].parts = [*(turns[-1].parts or []), *parts]
        else:
            turns.append(types.Content(role=role, parts=parts))
    return turns


def config(
    request: ProviderRequest, names: Names, max_output_tokens: int | None
) -> types.GenerateContentConfig:
    tools = None
    if request.tools:  # omitted, not empty, for the last, tool-less round
        tools = [types.Tool(function_declarations=[
            types.FunctionDeclaration(
                name=names.tools.wire(t.name), description=t.description,
                parameters_json_schema=t.parameters or None,
            )
            for t in request.tools
        ])]  # fmt: skip
    # Structured output only on a tool-less call: Gemini refuses a JSON response type
    # beside function declarations. The activity validates the answer either way.
    schema = request.output_schema if not tools else None
    return types.GenerateContentConfig(
        system_instruction=_native.system_text(request) or None,
        tools=tools,
        response_mime_type="application/json" if schema is not None else None,
        response_json_schema=schema,
        max_output_tokens=max_output_tokens,
        # The SDK would call Python callables itself; ours are activities. Declarations
        # only, and this makes sure.
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def parse_reply(
    response: types.GenerateContentResponse, names: Names, provider: str
) -> ProviderReply:
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        # The reason is the provider's text (the SDK keeps a value it does not know): only
        # a known one is named.
        raise _native.refused(provider, block_reason(str(feedback.block_reason.value)))
    if not response.candidates:
        raise malformed_reply(provider, "no candidates")
    candidate = response.candidates[0]
    finish = candidate.finish_reason.value if candidate.finish_reason is not None else "STOP"
    if finish in _REFUSALS:
        raise _native.refused(provider, finish)
    if finish == "MALFORMED_FUNCTION_CALL":  # no call to run; asking again usually works
        raise malformed_reply(provider, "malformed function call")
    text: list[str] = []
    calls: list[ToolCall] = []
    for part in (candidate.content.parts if candidate.content else None) or []:
        if part.function_call is not None:
            call = part.function_call
            calls.append(ToolCall(call_id=call.id or f"call{len(calls)}",
                                  name=names.tools.real(call.name or ""),
                                  arguments=dict(call.args or {})))  # fmt: skip
        elif part.text and not part.thought:
            text.append(part.text)
    usage = response.usage_metadata or types.GenerateContentResponseUsageMetadata()
    return ProviderReply(
        content="".join(text),
        tool_calls=calls,
        finish_reason="tool_calls" if calls else _FINISH.get(finish, finish.lower()),
        usage=Usage(
            prompt_tokens=(usage.prompt_token_count or 0)
            + (usage.tool_use_prompt_token_count or 0),
            # Thinking is billed as output.
            completion_tokens=(usage.candidates_token_count or 0)
            + (usage.thoughts_token_count or 0),
        ),
    )


class GeminiProvider:
    def __init__(
        self,
        *,
        api_key: str,
        max_output_tokens: int | None = None,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = _native.DEFAULT_TIMEOUT_SECONDS,
        name: str = "gemini",
    ) -> None:
        quiet_sdk_warnings()
        self._name = name
        self._max_output_tokens = max_output_tokens
        # One pooled client per provider, reused across turns and runs; ours, so the SDK
        # neither picks another transport nor retries on its own.
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(timeout))
        self._client = genai.Client(
            api_key=api_key,
            vertexai=False,
            http_options=types.HttpOptions(
                base_url=base_url,
                api_version=API_VERSION,
                timeout=int(timeout * 1000),  # milliseconds
                retry_options=types.HttpRetryOptions(attempts=1),
                httpx_async_client=self._http,
            ),
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        names = Names(request)
        try:
            response = await self._client.aio.models.generate_content(
                model=request.model,
                contents=contents(request, names),
                config=config(request, names, bounded(request, self._max_output_tokens)),
            )
        except errors.APIError as exc:
            raise self._status(exc) from None
        except httpx.RequestError as exc:
            raise _native.unreachable(self._name, exc) from None
        except json.JSONDecodeError:  # a 2xx whose body is not JSON
            raise malformed_reply(self._name, "not JSON") from None
        return parse_reply(response, names, self._name)

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        """As `complete`, streamed: the text goes to `emit` as it comes."""
        names = Names(request)
        folded = _Folded()
        try:
            chunks = await self._client.aio.models.generate_content_stream(
                model=request.model,
                contents=contents(request, names),
                config=config(request, names, bounded(request, self._max_output_tokens)),
            )
            async for chunk in chunks:
                await folded.add(chunk, emit)
        except errors.APIError as exc:
            raise self._status(exc) from None
        except httpx.RequestError as exc:
            raise _native.unreachable(self._name, exc) from None
        except ValueError:  # an event that is not JSON (pydantic's errors are ValueErrors)
            raise malformed_reply(self._name, "not a response stream") from None
        response = folded.response()
        if folded.finish is None and response.prompt_feedback is None:
            # No finish reason: the server hung up mid-reply, an outage (retried).
            raise _native.unreachable(self._name, ConnectionError("the stream ended early"))
        return parse_reply(response, names, self._name)

    def _status(self, exc: errors.APIError) -> Exception:
        """The SDK has read the body into `details`; the status and headers are the answer's,
        but for an error chunk in a 200 stream, whose code is the error's own."""
        r = exc.response
        headers = r.headers if isinstance(r, httpx.Response) else {}
        ok = isinstance(r, httpx.Response) and r.is_success
        status = r.status_code if isinstance(r, httpx.Response) and not ok else exc.code
        return classify(status, headers, json.dumps(exc.details).encode(), self._name)


class _Folded:
    """The chunks of a stream so far, as one response."""

    def __init__(self) -> None:
        self.parts: list[types.Part] = []
        self.finish: types.FinishReason | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.feedback: types.GenerateContentResponsePromptFeedback | None = None

    async def add(self, chunk: types.GenerateContentResponse, emit: Emit) -> None:
        self.feedback = chunk.prompt_feedback or self.feedback
        self.usage = chunk.usage_metadata or self.usage  # cumulative: the last one counts
        if not chunk.candidates:
            return
        candidate = chunk.candidates[0]
        self.finish = candidate.finish_reason or self.finish
        for part in (candidate.content.parts if candidate.content else None) or []:
            self.parts.append(part)
            if part.text and not part.thought and part.function_call is None:
                await emit(part.text)

    def response(self) -> types.GenerateContentResponse:
        content = types.Content(role="model", parts=self.parts)
        candidates = [types.Candidate(content=content, finish_reason=self.finish)]
        return types.GenerateContentResponse(
            candidates=candidates if self.finish or self.parts else None,
            usage_metadata=self.usage,
            prompt_feedback=self.feedback,
        )
