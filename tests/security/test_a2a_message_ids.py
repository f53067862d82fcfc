"""A first message's `messageId` is idempotent per caller only (issue 27 item 6): a caller
that reuses, or guesses, another caller's messageId gets a task of its own and learns
nothing of the other's (no id, no text, no state), and a messageId too long or with
control characters is refused before anything is stored."""

import asyncio
import uuid
from typing import Any

from agentrt.store.a2a.tasks import A2AStore
from tests.api.conftest import Live

SECRET_TEXT = "alice-private-order-9931"


def _message(text: str, message_id: str, context_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "contextId": context_id, "role": "ROLE_USER",
            "parts": [{"text": text}]}  # fmt: skip


async def _send(server: Live, message: dict[str, Any], who: str) -> dict[str, Any]:
    body = {"message": message, "configuration": {"returnImmediately": True}}
    reply: dict[str, Any] = await server.rpc("SendMessage", body, who)
    return reply


async def test_another_callers_message_id_never_returns_their_task(live: Live) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    alice = (await _send(live, _message(f"order? {SECRET_TEXT}", mid, ctx), "alice"))["result"]
    # bob replays alice's messageId, twice and concurrently: always his own one task.
    replies = await asyncio.gather(
        *(_send(live, _message("order 4?", mid, ctx), "bob") for _ in range(3))
    )
    bobs = {r["result"]["task"]["id"] for r in replies}
    assert len(bobs) == 1 and alice["task"]["id"] not in bobs
    for reply in replies:
        assert SECRET_TEXT not in str(reply)
    assert A2AStore(live.parts.ctx).page(owner="bob", context_id=ctx).total == 1


async def test_a_bad_message_id_is_refused_and_stores_nothing(live: Live) -> None:
    ctx = str(uuid.uuid4())
    for bad in ("m" * 201, "id\x00nul", "line\nbreak"):
        reply = await _send(live, _message("order 4?", bad, ctx), "alice")
        assert reply["error"]["code"] == -32602, reply
        assert "messageId" in reply["error"]["message"]
    assert A2AStore(live.parts.ctx).page(owner="alice", context_id=ctx).total == 0
