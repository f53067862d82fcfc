"""The two native wire formats as a test server speaks them: Anthropic Messages and Gemini
generateContent replies, and what each provider sent, read back provider-neutrally.

Shared by the providers' tests against FakeServer (tests/activities/test_native_providers.py)
and the end-to-end runs on the dev server (tests/workflows/test_native_models.py)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentrt.activities.ports import ModelProvider
from agentrt.activities.providers.anthropic_messages import AnthropicProvider
from agentrt.activities.providers.gemini import GeminiProvider

Call = tuple[str, dict[str, Any]]  # a tool call the model makes: name, arguments


def anthropic_reply(text: str = "", calls: tuple[Call, ...] = (), stop: str = "") -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
                for i, (n, a) in enumerate(calls)]  # fmt: skip
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": 30, "output_tokens": 5, "cache_read_input_tokens": 10},
    }  # fmt: skip


def gemini_reply(
    text: str = "", calls: tuple[Call, ...] = (), stop: str = "STOP"
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": stop}],
        "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 3,
                          "thoughtsTokenCount": 2},
    }  # fmt: skip


def anthropic_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool results a Messages request carries: (tool_use_id, content)."""
    return [(b["tool_use_id"], b["content"]) for m in body["messages"] if m["role"] == "user"
            for b in m["content"] if b["type"] == "tool_result"]  # fmt: skip


def gemini_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool results a generateContent request carries: (name, output)."""
    return [(p["functionResponse"]["name"], p["functionResponse"]["response"]["output"])
            for c in body["contents"] for p in c["parts"] if "functionResponse" in p]  # fmt: skip


@dataclass(frozen=True)
class Vendor:
    """One native API as the tests need it."""

    api: str  # the providers file's `api`
    path: str  # where a call goes, under the server's root, for model "m-test"
    key_header: tuple[str, str]  # the header carrying the key, and its value's prefix
    reply: Callable[..., dict[str, Any]]
    results: Callable[[dict[str, Any]], list[tuple[str, str]]]
    usage: tuple[int, int]  # (prompt, completion) tokens of every canned reply
    overloaded: int  # the status the vendor sends when overloaded
    error_body: Callable[[int, str], dict[str, Any]]
    make: Callable[..., ModelProvider]


ANTHROPIC = Vendor(
    api="anthropic", path="/v1/messages", key_header=("authorization", "Bearer "),
    reply=anthropic_reply, results=anthropic_results, usage=(40, 5), overloaded=529,
    error_body=lambda _s, kind: {"type": "error", "error": {"type": kind, "message": "x"}},
    make=AnthropicProvider,
)  # fmt: skip
GEMINI = Vendor(
    api="gemini", path="/v1beta/models/m-test:generateContent", key_header=("x-goog-api-key", ""),
    reply=gemini_reply, results=gemini_results, usage=(40, 5), overloaded=503,
    error_body=lambda s, kind: {"error": {"code": s, "message": "x", "status": kind}},
    make=GeminiProvider,
)  # fmt: skip
VENDORS = [ANTHROPIC, GEMINI]
