"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 (stdlib, in a thread)."""

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.exceptions import ApplicationError

from agentrt.activities.providers._http_errors import MAX_RETRY_DELAY, retry_after
from agentrt.activities.providers.openai_compat import INVALID_ARGUMENTS_KEY, OpenAICompatProvider
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Message, ProviderRequest, ToolCall, ToolSpec
from tests.activities.native_wire import stream_events

API_KEY = "sk-test-secret-key-0123456789"
SECRET_PROMPT = "my card number is 4111 1111 1111 1111"


@dataclass
class Canned:
    status: int = 200
    body: Any = None  # dict → JSON; str → sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # A stream (a list of SSE events, or a native reply a streaming request gets as one)
    # stops after `hold_after` events until `hold` is set: the client has the first pieces
    # while the server holds the rest.
    hold: threading.Event | None = None
    hold_after: int = 0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    """Answers each POST with the next canned reply and records what it received."""

    def __init__(self) -> None:
        self.replies: list[Canned] = []
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                server.seen.append(
                    Seen(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                    )
                )
                canned = server.replies.pop(0) if server.replies else Canned(500, "no reply")
                time.sleep(canned.delay)
                data = canned.body if isinstance(canned.body, str) else json.dumps(canned.body)
                kind = "application/json"
                events = [data]
                # A worker streams (live output): answer as the real API does, in chunks.
                if server.seen[-1].body.get("stream") and canned.status == 200:
                    if isinstance(canned.body, dict) and "choices" in canned.body:
                        data, kind = as_stream(canned.body), "text/event-stream"
                        events = [data]
                native = stream_events(self.path, server.seen[-1].body, canned.body)
                if isinstance(canned.body, list) or (native and canned.status == 200):
                    events = canned.body if isinstance(canned.body, list) else native or []
                    data, kind = "".join(events), "text/event-stream"
                try:
                    self.send_response(canned.status)
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data.encode())))
                    self.end_headers()
                    for i, event in enumerate(events):
                        if canned.hold is not None and i == canned.hold_after:
                            self.wfile.flush()
                            canned.hold.wait(10)
                        self.wfile.write(event.encode())
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def as_stream(body: dict[str, Any]) -> str:
    """A canned chat completion as `stream: true` gets it: the message as one delta (tool
    calls indexed), the finish reason, the usage in a last chunk, then [DONE]."""
    choice = body["choices"][0]
    delta = dict(choice["message"])
    if delta.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}]}
    ]
    if body.get("usage") is not None:
        chunks.append({"choices": [], "usage": body["usage"]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.stop()


@pytest_asyncio.fixture
async def provider(server: FakeServer) -> AsyncIterator[OpenAICompatProvider]:
    server.replies.clear()
    server.seen.clear()
    p = OpenAICompatProvider(api_key=API_KEY, base_url=server.base_url, timeout=5)
    yield p
    await p.aclose()


def completion(message: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    }


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


LOOKUP = ToolSpec(
    name="lookup_order",
    description="Look up an order by its id.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
)


def simple_request(tools: list[ToolSpec] | None = None) -> ProviderRequest:
    return ProviderRequest(
        model="gpt-test",
        messages=[Message(role="system", content="Be brief."), Message(role="user", content="Hi")],
        tools=tools,
    )


async def failure(provider: OpenAICompatProvider, request: ProviderRequest) -> ApplicationError:
    with pytest.raises(ApplicationError) as info:
        await provider.complete(request)
    err = info.value
    assert API_KEY not in str(err) and SECRET_PROMPT not in str(err)
    return err


async def test_text_answer(server: FakeServer, provider: OpenAICompatProvider) -> None:
    server.replies.append(Canned(body=completion({"content": "Hello!"})))
    reply = await provider.complete(simple_request())
    assert reply.content == "Hello!"
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (42, 7)
    sent = server.seen[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
    }  # no "tools" key when none are offered


async def test_tool_call_answer(server: FakeServer, provider: OpenAICompatProvider) -> None:
    calls = [
        tool_call("call_a", "lookup_order", '{"order_id": "A-1"}'),
        tool_call("call_b", "ping", ""),  # a parameterless call may send empty arguments
    ]
    server.replies.append(Canned(body=completion({"content": None, "tool_calls": calls}, None)))
    reply = await provider.complete(simple_request([LOOKUP]))
    assert reply.content == ""
    assert reply.finish_reason == "tool_calls"  # inferred when the server sends null
    assert [(c.call_id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_a", "lookup_order", {"order_id": "A-1"}),
        ("call_b", "ping", {}),
    ]


async def test_request_shape_of_a_tool_round(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    server.replies.append(Canned(body=completion({"content": "Order A-1 shipped."})))
    request = ProviderRequest(
        model="gpt-test",
        messages=[
            Message(role="system", content="Be brief."),
            Message(role="user", content="Where is A-1?"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(call_id="r1.1", name="lookup_order", arguments={"order_id": "A-1"})
                ],
            ),
            Message(
                role="tool",
                content='{"status": "shipped"}',
                tool_call_id="r1.1",
                tool_name="lookup_order",
            ),
        ],
        tools=[LOOKUP, ToolSpec(name="ping", description="No parameters.")],
    )
    await provider.complete(request)
    body = server.seen[0].body
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "r1.1",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'},
            }
        ],
    }
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "r1.1",
        "content": '{"status": "shipped"}',
    }
    assert body["tools"] == [
        {"type": "function", "function": {**LOOKUP.model_dump()}},
        {"type": "function", "function": {"name": "ping", "description": "No parameters."}},
    ]


async def test_malformed_arguments_become_a_marker(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    broken = '{"order_id": "A-1"' + "x" * 2000  # cut-off JSON, and long
    calls = [
        tool_call("c1", "lookup_order", broken),
        tool_call("c2", "lookup_order", '["not", "an", "object"]'),
    ]
    server.replies.append(Canned(body=completion({"tool_calls": calls}, "tool_calls")))
    reply = await provider.complete(simple_request([LOOKUP]))
    first, second = reply.tool_calls
    assert list(first.arguments) == [INVALID_ARGUMENTS_KEY]
    assert broken.startswith(first.arguments[INVALID_ARGUMENTS_KEY])
    assert len(first.arguments[INVALID_ARGUMENTS_KEY]) == 500
    assert second.arguments == {INVALID_ARGUMENTS_KEY: '["not", "an", "object"]'}


async def test_429_is_retryable_with_the_servers_delay(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    body = {"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}}
    server.replies.append(Canned(429, body, {"Retry-After": "7", "x-request-id": "req_123"}))
    err = await failure(provider, simple_request())
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value
    assert not err.non_retryable
    assert err.next_retry_delay == timedelta(seconds=7)
    assert "429" in err.message and "rate_limit_exceeded" in err.message
    assert "req_123" not in err.message  # the provider's header: never in the message


async def test_retry_after_ms_wins(server: FakeServer, provider: OpenAICompatProvider) -> None:
    headers = {"retry-after-ms": "1500", "Retry-After": "9"}
    server.replies.append(Canned(503, {"error": {"message": "busy"}}, headers))
    err = await failure(provider, simple_request())
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value and not err.non_retryable
    assert err.next_retry_delay == timedelta(milliseconds=1500)


async def test_400_is_non_retryable_and_keeps_secrets_out(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    # A server that echoes the key and the prompt back: neither may reach the error.
    echo = {"error": {"message": f"bad {API_KEY} {SECRET_PROMPT}", "code": "invalid_request"}}
    server.replies.append(Canned(400, echo))
    request = simple_request()
    request.messages.append(Message(role="user", content=SECRET_PROMPT))
    err = await failure(provider, request)
    assert err.type == ErrorType.PROVIDER_REJECTED.value
    assert err.non_retryable
    assert err.next_retry_delay is None
    assert "400" in err.message and "invalid_request" in err.message


@pytest.mark.parametrize("status", [401, 404, 422])
async def test_other_4xx_are_rejections(
    server: FakeServer, provider: OpenAICompatProvider, status: int
) -> None:
    server.replies.append(Canned(status, "not json at all"))
    err = await failure(provider, simple_request())
    assert err.type == ErrorType.PROVIDER_REJECTED.value and err.non_retryable


@pytest.mark.parametrize("status", [408, 409, 500, 502])
async def test_transient_statuses_are_retryable(
    server: FakeServer, provider: OpenAICompatProvider, status: int
) -> None:
    server.replies.append(Canned(status, {"error": {"message": "oops", "type": "server_error"}}))
    err = await failure(provider, simple_request())
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value
    assert not err.non_retryable
    assert err.next_retry_delay is None  # no header: Temporal's backoff decides


async def test_garbled_success_is_retryable(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    server.replies.append(Canned(200, "{'truncated"))
    server.replies.append(Canned(200, {"choices": []}))
    server.replies.append(Canned(200, {"choices": [{"message": "nope"}]}))
    for _ in range(3):
        err = await failure(provider, simple_request())
        assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value and not err.non_retryable
        assert "malformed" in err.message


async def test_connection_refused_is_retryable() -> None:
    # A bound socket that never listens: connecting to it is refused, with no race.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        p = OpenAICompatProvider(api_key=API_KEY, base_url=f"http://127.0.0.1:{port}/v1")
        try:
            err = await failure(p, simple_request())
        finally:
            await p.aclose()
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value
    assert not err.non_retryable
    assert "ConnectError" in err.message


async def test_timeout_is_retryable(server: FakeServer) -> None:
    server.replies.clear()
    server.replies.append(Canned(body=completion({"content": "late"}), delay=1.0))
    p = OpenAICompatProvider(api_key=API_KEY, base_url=server.base_url, timeout=0.2)
    try:
        err = await failure(p, simple_request())
    finally:
        await p.aclose()
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE.value and not err.non_retryable
    assert "Timeout" in err.message


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    date = "Thu, 01 Jan 2026 12:00:30 GMT"
    assert retry_after(httpx.Headers({"retry-after": date}), now=now) == timedelta(seconds=30)
    assert retry_after(httpx.Headers({"retry-after": "0.5"})) == timedelta(seconds=0.5)
    assert retry_after(httpx.Headers({"retry-after": "86400"})) == MAX_RETRY_DELAY
    for junk in ("soon", "-3", "0", "nan"):
        assert retry_after(httpx.Headers({"retry-after": junk})) is None
    assert retry_after(httpx.Headers({"retry-after-ms": "x", "retry-after": "2"})) == timedelta(
        seconds=2
    )


async def test_a_rejection_keeps_the_status_and_a_fixed_category_never_the_body(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    # A LiteLLM proxy's 400 quoting the request and a key prefix (issue 25): the body may
    # echo anything the request held, so none of it reaches the message.
    reason = (
        "litellm.BadRequestError: Invalid model name passed in model=gpt-nosuch. "
        "Incorrect API key provided: sk-abc1234567. Bearer abcdefghijklmnop1234"
    )
    server.replies.append(Canned(400, {"error": {"message": reason, "code": "400"}}))
    err = await failure(provider, simple_request())
    assert err.type == ErrorType.PROVIDER_REJECTED.value
    assert err.message == "HTTP 400 from provider openai (bad request)"


async def test_a_plain_text_rejection_keeps_only_its_status(
    server: FakeServer, provider: OpenAICompatProvider
) -> None:
    server.replies.append(Canned(404, "model gpt-test not found on this server"))
    err = await failure(provider, simple_request())
    assert err.message == "HTTP 404 from provider openai (not found: check the model and base URL)"
