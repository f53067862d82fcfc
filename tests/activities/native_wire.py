"""The two native wire formats as a test server speaks them: Anthropic Messages and Gemini
generateContent replies, and what each provider sent, read back provider-neutrally.

Shared by the providers' tests against FakeServer (tests/activities/test_native_providers.py)
and the end-to-end runs on the dev server (tests/workflows/test_native_models.py)."""

import json
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


def _sse(data: dict[str, Any], event: str = "") -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def _halves(text: str) -> list[str]:
    """A text as two deltas, so a stream shows it in pieces."""
    cut = len(text) // 2
    return [t for t in (text[:cut], text[cut:]) if t]


def anthropic_events(reply: dict[str, Any]) -> list[str]:
    """A canned Message as Messages streams it (`stream: true`): message_start with the
    input usage, each block opened, filled by deltas (text halves, tool input as JSON
    fragments) and closed, message_delta with the stop reason and output tokens, message_stop."""
    usage = reply["usage"]
    start = {**reply, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}  # fmt: skip
    events = [_sse({"type": "message_start", "message": start}, "message_start")]
    for i, block in enumerate(reply["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in _halves(block["text"])]
        else:
            opened = {**block, "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": t} for t in _halves(raw)]
        events.append(_sse({"type": "content_block_start", "index": i, "content_block": opened},
                           "content_block_start"))  # fmt: skip
        events += [_sse({"type": "content_block_delta", "index": i, "delta": d},
                        "content_block_delta") for d in deltas]  # fmt: skip
        events.append(_sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    events.append(_sse({"type": "message_delta",
                        "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
                        "usage": {"output_tokens": usage["output_tokens"]}},
                       "message_delta"))  # fmt: skip
    return [*events, _sse({"type": "message_stop"}, "message_stop")]


def anthropic_error_event(kind: str) -> str:
    return _sse({"type": "error", "error": {"type": kind, "message": "x"}}, "error")


def gemini_events(reply: dict[str, Any]) -> list[str]:
    """A canned response as `:streamGenerateContent?alt=sse` sends it: a chunk per text
    half, the function calls in one, the finish reason and the usage in the last."""
    if "candidates" not in reply:  # a blocked prompt: one chunk saying so
        return [_sse(reply)]
    (candidate,) = reply["candidates"]
    parts: list[dict[str, Any]] = candidate["content"]["parts"]
    chunks = [[{"text": t}] for p in parts if "text" in p for t in _halves(p["text"])]
    chunks.append([p for p in parts if "text" not in p])
    events = [_sse({"candidates": [{"content": {"role": "model", "parts": c}}],
                    "usageMetadata": {"promptTokenCount": 40}}) for c in chunks[:-1]]  # fmt: skip
    last = {"content": {"role": "model", "parts": chunks[-1]},
            "finishReason": candidate["finishReason"]}  # fmt: skip
    return [*events, _sse({"candidates": [last], "usageMetadata": reply["usageMetadata"]})]


def gemini_error_event(status: int, kind: str) -> str:
    return _sse({"error": {"code": status, "message": "x", "status": kind}})


def stream_events(path: str, request: Any, reply: Any) -> list[str] | None:
    """The canned reply as the SSE events of a native streaming request, or None when the
    request does not stream or the reply is not a native one."""
    if not isinstance(reply, dict):
        return None
    if isinstance(request, dict) and request.get("stream") and reply.get("type") == "message":
        return anthropic_events(reply)
    if ":streamGenerateContent" in path:
        return gemini_events(reply)
    return None


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
    stream_path: str  # where a streamed call goes (a worker with live output streams)
    key_header: tuple[str, str]  # the header carrying the key, and its value's prefix
    reply: Callable[..., dict[str, Any]]
    results: Callable[[dict[str, Any]], list[tuple[str, str]]]
    usage: tuple[int, int]  # (prompt, completion) tokens of every canned reply
    overloaded: int  # the status the vendor sends when overloaded
    error_body: Callable[[int, str], dict[str, Any]]
    make: Callable[..., ModelProvider]


ANTHROPIC = Vendor(
    api="anthropic", path="/v1/messages", stream_path="/v1/messages",
    key_header=("authorization", "Bearer "),
    reply=anthropic_reply, results=anthropic_results, usage=(40, 5), overloaded=529,
    error_body=lambda _s, kind: {"type": "error", "error": {"type": kind, "message": "x"}},
    make=AnthropicProvider,
)  # fmt: skip
GEMINI = Vendor(
    api="gemini", path="/v1beta/models/m-test:generateContent",
    stream_path="/v1beta/models/m-test:streamGenerateContent?alt=sse",
    key_header=("x-goog-api-key", ""),
    reply=gemini_reply, results=gemini_results, usage=(40, 5), overloaded=503,
    error_body=lambda s, kind: {"error": {"code": s, "message": "x", "status": kind}},
    make=GeminiProvider,
)  # fmt: skip
VENDORS = [ANTHROPIC, GEMINI]
