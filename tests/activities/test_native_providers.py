"""The native providers (Anthropic Messages, Gemini) through their vendors' SDKs, against a
real HTTP server on 127.0.0.1 speaking each wire format: a tool-call turn, a final answer
with usage, and errors → typed ApplicationErrors, one request per call (no SDK retries)."""

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from temporalio.exceptions import ApplicationError

from agentrt.activities.ports import ModelProvider
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Message, ProviderRequest, ToolCall, ToolSpec
from tests.activities import test_openai_provider as openai_tests
from tests.activities.native_wire import ANTHROPIC, GEMINI, VENDORS, Vendor
from tests.activities.test_openai_provider import SECRET_PROMPT, Canned, FakeServer

server = openai_tests.server  # the module's local server, a fixture

API_KEY = "native-secret-key-0123456789"
LOOKUP = ToolSpec(
    name="shop.lookup_order",  # an MCP-style name: '.' is not wire-safe for either API
    description="Look up an order.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
)
WIRE_LOOKUP = "shop_lookup_order"


@pytest.fixture(params=VENDORS, ids=lambda v: v.api)
def vendor(request: pytest.FixtureRequest) -> Vendor:
    v: Vendor = request.param
    return v


@pytest_asyncio.fixture
async def provider(server: FakeServer, vendor: Vendor) -> AsyncIterator[Any]:
    server.replies.clear()
    server.seen.clear()
    p = vendor.make(api_key=API_KEY, base_url=root(server), timeout=5, name="native")
    yield p
    await p.aclose()


def root(server: FakeServer) -> str:
    return server.base_url.removesuffix("/v1")


def tool_round() -> ProviderRequest:
    """Round 2 of a run: the model called the tool, the result is back."""
    return ProviderRequest(
        model="m-test",
        messages=[
            Message(role="system", content="Be brief."),
            Message(role="user", content=f"Where is A-1? {SECRET_PROMPT}"),
            Message(role="assistant", tool_calls=[
                ToolCall(call_id="r1.1", name=LOOKUP.name, arguments={"order_id": "A-1"})]),
            Message(role="tool", content='{"status": "shipped"}', tool_call_id="r1.1",
                    tool_name=LOOKUP.name),
        ],
        tools=[LOOKUP],
    )  # fmt: skip


async def failure(provider: ModelProvider, server: FakeServer) -> ApplicationError:
    with pytest.raises(ApplicationError) as info:
        await provider.complete(tool_round())
    err = info.value
    assert API_KEY not in str(err) and SECRET_PROMPT not in str(err)
    assert len(server.seen) == 1  # one attempt: the SDK did not retry
    return err


async def test_a_tool_call_turn_maps_names_back_and_reports_usage(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    server.replies.append(Canned(body=vendor.reply(calls=((WIRE_LOOKUP, {"order_id": "B-2"}),))))
    reply = await provider.complete(tool_round())
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [(LOOKUP.name, {"order_id": "B-2"})]
    assert reply.finish_reason == "tool_calls"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == vendor.usage
    (sent,) = server.seen
    assert sent.path == vendor.path
    header, prefix = vendor.key_header
    assert sent.headers[header] == prefix + API_KEY
    # The tool's result went back in the vendor's own shape.
    assert vendor.results(sent.body) == [
        ("r1_1" if vendor is ANTHROPIC else WIRE_LOOKUP, '{"status": "shipped"}')
    ]


async def _sent(server: FakeServer, vendor: Any, **options: Any) -> dict[str, Any]:
    """The body of the one request a provider sends for a tool round."""
    server.seen.clear()
    server.replies.append(Canned(body=vendor.reply(text="Shipped.")))
    p = vendor.make(api_key=API_KEY, base_url=root(server), **options)
    await p.complete(tool_round())
    await p.aclose()
    body: dict[str, Any] = server.seen[0].body
    return body


async def test_anthropic_request_shape(server: FakeServer) -> None:
    body = await _sent(server, ANTHROPIC, max_tokens=321)
    assert (body["model"], body["max_tokens"], body["system"]) == ("m-test", 321, "Be brief.")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "r1_1", "name": WIRE_LOOKUP, "input": {"order_id": "A-1"}}
    ]
    assert body["messages"][2]["content"][0]["is_error"] is False
    assert body["tools"] == [
        {"name": WIRE_LOOKUP, "description": LOOKUP.description, "input_schema": LOOKUP.parameters}
    ]


async def test_gemini_request_shape(server: FakeServer) -> None:
    body = await _sent(server, GEMINI, max_output_tokens=99)
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    (call,) = body["contents"][1]["parts"]
    assert call["functionCall"] == {"id": "r1_1", "name": WIRE_LOOKUP, "args": {"order_id": "A-1"}}
    # The transcript keeps no thought signature: the documented sentinel stands in.
    assert call["thoughtSignature"] == "skip_thought_signature_validator"
    assert base64.urlsafe_b64decode(call["thoughtSignature"])  # valid base64 bytes
    (decl,) = body["tools"][0]["functionDeclarations"]
    assert (decl["name"], decl["parameters_json_schema"]) == (WIRE_LOOKUP, LOOKUP.parameters)
    assert body["generationConfig"]["maxOutputTokens"] == 99


async def test_gemini_asks_for_a_typed_answer_natively_on_a_tool_less_call(
    server: FakeServer,
) -> None:
    schema = {"type": "object", "properties": {"total": {"type": "integer"}}}
    server.seen.clear()
    server.replies.append(Canned(body=GEMINI.reply(text='{"total": 3}')))
    p = GEMINI.make(api_key=API_KEY, base_url=root(server))
    last = ProviderRequest(
        model="m-test", messages=[Message(role="user", content="Total?")], output_schema=schema
    )
    reply = await p.complete(last)
    await p.aclose()
    assert reply.content == '{"total": 3}'
    config = server.seen[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


async def test_a_final_answer_has_text_and_usage_and_no_tools_offered(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    server.replies.append(Canned(body=vendor.reply(text="A-1 shipped.")))
    request = tool_round().model_copy(update={"tools": None})  # the last, tool-less round
    reply = await provider.complete(request)
    assert (reply.content, reply.tool_calls, reply.finish_reason) == ("A-1 shipped.", [], "stop")
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == vendor.usage
    assert "tools" not in server.seen[0].body


async def test_rate_limit_is_retryable_with_the_servers_delay(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    kind = "rate_limit_error" if vendor is ANTHROPIC else "RESOURCE_EXHAUSTED"
    server.replies.append(Canned(429, vendor.error_body(429, kind), {"retry-after": "7"}))
    err = await failure(provider, server)
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE and not err.non_retryable
    assert err.next_retry_delay is not None and err.next_retry_delay.total_seconds() == 7
    assert "HTTP 429" in str(err) and kind in str(err)


async def test_overload_is_retryable(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    kind = "overloaded_error" if vendor is ANTHROPIC else "UNAVAILABLE"
    server.replies.append(Canned(vendor.overloaded, vendor.error_body(vendor.overloaded, kind),
                                 {"request-id": "req_abc"}))  # fmt: skip
    err = await failure(provider, server)
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE and not err.non_retryable
    assert f"HTTP {vendor.overloaded}" in str(err) and kind in str(err)


async def test_a_bad_request_is_rejected_for_good_without_the_body(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    body = vendor.error_body(400, "invalid_request_error" if vendor is ANTHROPIC
                             else "INVALID_ARGUMENT")  # fmt: skip
    body["error"]["message"] = f"echo: {SECRET_PROMPT} {API_KEY}"
    server.replies.append(Canned(400, body))
    err = await failure(provider, server)
    assert err.type == ErrorType.PROVIDER_REJECTED and err.non_retryable


@pytest.mark.parametrize(
    ("vendor_", "body"),
    [
        (ANTHROPIC, ANTHROPIC.reply(text="I can't help with that.", stop="refusal")),
        (GEMINI, GEMINI.reply(stop="SAFETY")),
        (GEMINI, {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
    ],
    ids=["anthropic-refusal", "gemini-safety-stop", "gemini-prompt-blocked"],
)
async def test_a_refusal_is_a_typed_non_retryable_rejection(
    server: FakeServer,
    vendor_: Vendor,
    body: dict[str, Any],
) -> None:
    server.seen.clear()
    server.replies.append(Canned(body=body))
    p = vendor_.make(api_key=API_KEY, base_url=root(server))
    err = await failure(p, server)
    await p.aclose()
    assert err.type == ErrorType.PROVIDER_REJECTED and err.non_retryable
    assert "refused" in str(err) and "can't help" not in str(err)


async def test_unreachable_and_malformed_are_retryable(
    server: FakeServer,
    vendor: Vendor,
) -> None:
    dead = vendor.make(api_key=API_KEY, base_url="http://127.0.0.1:9", timeout=2)
    with pytest.raises(ApplicationError) as info:
        await dead.complete(tool_round())
    await dead.aclose()
    assert info.value.type == ErrorType.PROVIDER_UNAVAILABLE and not info.value.non_retryable
    assert "unreachable" in str(info.value)
    p = vendor.make(api_key=API_KEY, base_url=root(server))
    for body in ({"not": "a reply"}, "cut {"):
        server.seen.clear()
        server.replies.append(Canned(body=body))
        err = await failure(p, server)
        assert err.type == ErrorType.PROVIDER_UNAVAILABLE and "malformed" in str(err)
    await p.aclose()


async def test_a_redirect_is_not_followed(
    server: FakeServer,
    provider: ModelProvider,
    vendor: Vendor,
) -> None:
    """Requests go to the base URL only: a redirect elsewhere is an error, never followed
    (the key would go with it)."""
    server.replies.append(Canned(307, {}, {"location": "http://127.0.0.1:9/steal"}))
    err = await failure(provider, server)
    assert "HTTP 307" in str(err) and err.non_retryable


async def test_a_gemini_malformed_function_call_is_asked_again(server: FakeServer) -> None:
    """Gemini could not produce a valid call: nothing to run, and the model may well manage
    next time, so it is a retryable failure, not an empty answer."""
    server.seen.clear()
    server.replies.append(Canned(body=GEMINI.reply(stop="MALFORMED_FUNCTION_CALL")))
    p = GEMINI.make(api_key=API_KEY, base_url=root(server))
    err = await failure(p, server)
    await p.aclose()
    assert err.type == ErrorType.PROVIDER_UNAVAILABLE and not err.non_retryable
