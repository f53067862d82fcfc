"""Streamed Chat Completions (`stream: true`): the server's `data:` lines, each a chunk of
the reply, folded back into the one reply the non-streamed call returns, with the text
handed on as it comes. `stream_options.include_usage` asks for the usage in a last chunk;
a server that ignores it leaves the usage at 0, as a non-streamed reply without one does."""

import json
from collections.abc import AsyncIterator
from typing import Any

from agentrt.activities.ports import Emit

DONE = "[DONE]"


class StreamCut(Exception):
    """The stream ended before its `[DONE]`: the server hung up mid-reply."""


async def data_lines(lines: AsyncIterator[str]) -> AsyncIterator[Any]:
    """The JSON of each `data:` line up to `[DONE]` (comments and other fields skipped);
    StreamCut when the lines end first."""
    async for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == DONE:
            return
        if data:
            yield json.loads(data)
    raise StreamCut("the stream ended before [DONE]")


class Folded:
    """The chunks so far, as a /chat/completions body (what `parse_reply` reads)."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    async def add(self, chunk: Any, emit: Emit) -> None:
        if not isinstance(chunk, dict):
            raise ValueError("a chunk is not an object")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            if isinstance(text := delta.get("content"), str) and text:
                self.content.append(text)
                await emit(text)
            if isinstance(refusal := delta.get("refusal"), str):
                self.refusal.append(refusal)
            for call in delta.get("tool_calls") or []:
                self._add_call(call)

    def _add_call(self, call: Any) -> None:
        """A tool call comes in pieces keyed by its index: id and name once, the
        arguments' JSON text in fragments."""
        slot = self.calls.setdefault(
            int(call.get("index", 0)), {"id": "", "function": {"name": "", "arguments": ""}}
        )
        slot["id"] = call.get("id") or slot["id"]
        function = call.get("function") or {}
        slot["function"]["name"] += function.get("name") or ""
        slot["function"]["arguments"] += function.get("arguments") or ""

    def body(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "content": "".join(self.content) or None,
            "refusal": "".join(self.refusal) or None,
            "tool_calls": [self.calls[i] for i in sorted(self.calls)] or None,
        }
        choice = {"message": message, "finish_reason": self.finish_reason}
        return {"choices": [choice], "usage": self.usage}
