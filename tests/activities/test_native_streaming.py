"""The native providers streamed (what a worker with live output asks for), against the
local server speaking each vendor's SSE: the text reaches `emit` while the server still
holds the rest; the finished turn (text, tool calls, usage, finish) is the one the
non-streamed call returns; an error event mid-stream, a cut stream and a refusal are
typed as they are without streaming, in one attempt."""

import asyncio
import threading
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import ProviderReply
from tests.activities import test_native_providers as native
from tests.activities.native_wire import (
    ANTHROPIC,
    GEMINI,
    Vendor,
    anthropic_error_event,
    anthropic_events,
    gemini_error_event,
    gemini_events,
)
from tests.activities.test_native_providers import API_KEY, WIRE_LOOKUP, root, tool_round
from tests.activities.test_openai_provider import Canned, FakeServer

server = native.server  # the module's local server, a fixture
provider = native.provider
vendor = native.vendor


def events(vendor: Vendor, reply: dict[str, Any]) -> list[str]:
    return anthropic_events(reply) if vendor is ANTHROPIC else gemini_events(reply)


class Emitted:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.first = asyncio.Event()

    async def __call__(self, text: str) -> None:
        self.pieces.append(text)
        self.first.set()


async def streamed(p: Any, emitted: Emitted | None = None) -> ProviderReply:
    reply: ProviderReply = await p.stream(tool_round(), emitted or Emitted())
    return reply


async def test_the_text_arrives_while_the_server_holds_the_rest(
    server: FakeServer, provider: Any, vendor: Vendor
) -> None:
    sse = events(vendor, vendor.reply(text="A-1 has shipped."))
    first = next(i for i, e in enumerate(sse) if "A-1 has " in e)
    hold = threading.Event()
    server.replies.append(Canned(body=sse, hold=hold, hold_after=first + 1))
    emitted = Emitted()
    call = asyncio.create_task(streamed(provider, emitted))
    try:
        await asyncio.wait_for(emitted.first.wait(), 5)
        assert emitted.pieces == ["A-1 has "] and not call.done()
    finally:
        hold.set()
    reply = await call
    assert emitted.pieces == ["A-1 has ", "shipped."]
    assert (reply.content, reply.tool_calls, reply.finish_reason) == (
        "A-1 has shipped.",
        [],
        "stop",
    )
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == vendor.usage
    (sent,) = server.seen
    assert sent.path == vendor.stream_path
    assert sent.headers[vendor.key_header[0]] == vendor.key_header[1] + API_KEY
    assert sent.body.get("stream") is (True if vendor is ANTHROPIC else None)


async def test_a_streamed_tool_call_turn_is_the_non_streamed_turn(
    server: FakeServer, provider: Any, vendor: Vendor
) -> None:
    canned = vendor.reply(
        text="Let me look.", calls=((WIRE_LOOKUP, {"order_id": "B-2", "n": [1, 2]}),)
    )
    server.replies.append(Canned(body=canned))
    whole = await provider.complete(tool_round())
    server.replies.append(Canned(body=canned))  # the streaming request gets it as SSE
    emitted = Emitted()
    reply = await streamed(provider, emitted)
    assert reply == whole
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        (native.LOOKUP.name, {"order_id": "B-2", "n": [1, 2]})
    ]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == vendor.usage
    assert reply.finish_reason == "tool_calls" and "".join(emitted.pieces) == "Let me look."
    assert server.seen[1].path == vendor.stream_path
    # The same request otherwise: the streamed one only asks for the stream.
    assert {k: v for k, v in server.seen[1].body.items() if k != "stream"} == server.seen[0].body


@pytest.mark.parametrize(
    ("vendor_", "error", "kind", "retryable"),
    [
        (
            ANTHROPIC,
            anthropic_error_event("overloaded_error"),
            ErrorType.PROVIDER_UNAVAILABLE,
            True,
        ),
        (
            ANTHROPIC,
            anthropic_error_event("rate_limit_error"),
            ErrorType.PROVIDER_UNAVAILABLE,
            True,
        ),
        (
            ANTHROPIC,
            anthropic_error_event("invalid_request_error"),
            ErrorType.PROVIDER_REJECTED,
            False,
        ),
        (GEMINI, gemini_error_event(503, "UNAVAILABLE"), ErrorType.PROVIDER_UNAVAILABLE, True),
        (
            GEMINI,
            gemini_error_event(429, "RESOURCE_EXHAUSTED"),
            ErrorType.PROVIDER_UNAVAILABLE,
            True,
        ),
        (GEMINI, gemini_error_event(400, "INVALID_ARGUMENT"), ErrorType.PROVIDER_REJECTED, False),
    ],
    ids=[
        "anthropic-overloaded",
        "anthropic-rate-limit",
        "anthropic-invalid",
        "gemini-unavailable",
        "gemini-rate-limit",
        "gemini-invalid",
    ],
)
async def test_an_error_mid_stream_is_typed(
    server: FakeServer, vendor_: Vendor, error: str, kind: ErrorType, retryable: bool
) -> None:
    server.seen.clear()
    sse = events(vendor_, vendor_.reply(text="Half an answer"))
    first = next(i for i, e in enumerate(sse) if "Half an" in e)
    server.replies.append(Canned(body=[*sse[: first + 1], error]))
    p = vendor_.make(api_key=API_KEY, base_url=root(server))
    emitted = Emitted()
    with pytest.raises(ApplicationError) as info:
        await streamed(p, emitted)
    await p.aclose()
    err = info.value
    assert emitted.pieces == ["Half an"]  # shown, and withdrawn by the retry's retract
    assert err.type == kind and err.non_retryable is not retryable
    assert API_KEY not in str(err) and len(server.seen) == 1  # one attempt: no SDK retry


async def test_a_cut_stream_is_retryable(server: FakeServer, vendor: Vendor) -> None:
    server.seen.clear()
    sse = events(vendor, vendor.reply(text="Half an answer"))
    server.replies.append(Canned(body=sse[:-1]))  # no message_stop / no finish reason
    p = vendor.make(api_key=API_KEY, base_url=root(server))
    with pytest.raises(ApplicationError) as info:
        await streamed(p)
    await p.aclose()
    assert info.value.type == ErrorType.PROVIDER_UNAVAILABLE and not info.value.non_retryable
    assert len(server.seen) == 1


@pytest.mark.parametrize(
    ("vendor_", "body"),
    [
        (ANTHROPIC, ANTHROPIC.reply(text="I can't help with that.", stop="refusal")),
        (GEMINI, GEMINI.reply(text="I can't", stop="SAFETY")),
        (GEMINI, {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
    ],
    ids=["anthropic-refusal", "gemini-safety-stop", "gemini-prompt-blocked"],
)
async def test_a_streamed_refusal_is_a_typed_rejection(
    server: FakeServer, vendor_: Vendor, body: dict[str, Any]
) -> None:
    server.seen.clear()
    server.replies.append(Canned(body=body))
    p = vendor_.make(api_key=API_KEY, base_url=root(server))
    with pytest.raises(ApplicationError) as info:
        await streamed(p)
    await p.aclose()
    assert info.value.type == ErrorType.PROVIDER_REJECTED and info.value.non_retryable
    assert "refused" in str(info.value) and "can't" not in str(info.value)


async def test_a_refused_stream_request_is_typed_as_without_streaming(
    server: FakeServer, provider: Any, vendor: Vendor
) -> None:
    """An error status before any event (a rate limit, a bad request) is what `complete`
    makes of it: the status, the vendor's code and the server's delay, never the body."""
    kind = "rate_limit_error" if vendor is ANTHROPIC else "RESOURCE_EXHAUSTED"
    server.replies.append(Canned(429, vendor.error_body(429, kind), {"retry-after": "7"}))
    with pytest.raises(ApplicationError) as info:
        await streamed(provider)
    err = info.value
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE and not err.non_retryable
    assert err.next_retry_delay is not None and err.next_retry_delay.total_seconds() == 7
    assert "HTTP 429" in str(err) and kind in str(err)
    body = vendor.error_body(400, "invalid_request_error" if vendor is ANTHROPIC
                             else "INVALID_ARGUMENT")  # fmt: skip
    body["error"]["message"] = f"echo: {API_KEY}"
    server.replies.append(Canned(400, body))
    with pytest.raises(ApplicationError) as info:
        await streamed(provider)
    assert info.value.type == ErrorType.PROVIDER_REJECTED and info.value.non_retryable
    assert API_KEY not in str(info.value) and len(server.seen) == 2


async def test_a_stream_event_that_is_not_json_is_a_malformed_reply(
    server: FakeServer, vendor: Vendor
) -> None:
    server.seen.clear()
    sse = events(vendor, vendor.reply(text="Half an answer"))
    garbled = ("event: content_block_delta\n" if vendor is ANTHROPIC else "") + "data: cut {\n\n"
    server.replies.append(Canned(body=[sse[0], garbled, *sse[1:]]))
    p = vendor.make(api_key=API_KEY, base_url=root(server))
    with pytest.raises(ApplicationError) as info:
        await streamed(p)
    await p.aclose()
    assert info.value.type == ErrorType.PROVIDER_UNAVAILABLE and "malformed" in str(info.value)
