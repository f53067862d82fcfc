"""SSE from the journal: a client that disconnects mid-run and resumes from its last
sequence misses nothing; a subscription starts with the Task snapshot."""

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from tests.api.conftest import Live, user_message


async def _sse(
    live: Live, method: str, params: dict[str, Any], **headers: str
) -> AsyncIterator[dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", live.url + "/", json=body, headers={**live.headers(), **headers}) as r,
    ):
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                data = json.loads(line[5:])
                assert "error" not in data, data
                yield data["result"]


def _seq(event: dict[str, Any]) -> int:
    inner = next(iter(event.values()))
    return int(inner["metadata"]["sequence"])


def _state(event: dict[str, Any]) -> str | None:
    if "statusUpdate" in event:
        return str(event["statusUpdate"]["status"]["state"])
    if "task" in event:
        return str(event["task"]["status"]["state"])
    return None


async def test_a_client_that_disconnects_mid_run_resumes_without_missing_an_event(
    live: Live,
) -> None:
    first: list[dict[str, Any]] = []
    stream = _sse(live, "SendStreamingMessage", {"message": user_message("please refund")})
    async for event in stream:
        first.append(event)
        note = json.dumps(event)
        if "statusUpdate" in event and "approval" in note:
            break  # the client goes away while the run waits for an operator
    await stream.aclose()
    assert "task" in first[0]
    task_id = first[0]["task"]["id"]
    last = _seq(first[-1])

    rec = live.store.get(task_id, None)
    assert rec is not None
    view = await live.runtime.status(rec.workflow_id)
    assert view.pending_approval is not None

    subscribed = asyncio.Event()

    async def resume() -> list[dict[str, Any]]:
        params = {"id": task_id}
        got = []
        async for e in _sse(live, "SubscribeToTask", params, **{"Last-Event-ID": str(last)}):
            got.append(e)
            subscribed.set()
        return got

    resumed_task = asyncio.create_task(resume())
    # The subscription is live (its snapshot arrived) before the run goes on.
    await asyncio.wait_for(subscribed.wait(), 30)
    await live.runtime.approve(
        rec.workflow_id,
        approved=True,
        decided_by="ops",
        turn_digest=view.pending_approval.turn_digest,
    )
    second = await asyncio.wait_for(resumed_task, 30)

    assert "task" in second[0] and _seq(second[0]) == last  # the snapshot where it left off
    seen = [_seq(e) for e in first[1:]] + [_seq(e) for e in second[1:]]
    head = live.store.get(task_id, None)
    assert head is not None
    assert [_seq(first[0]), *seen] == list(range(0, head.journal_head + 1))
    assert _state(second[-1]) == "TASK_STATE_COMPLETED"
    assert any("artifactUpdate" in e for e in second)


async def test_subscribe_starts_with_the_task_and_refuses_a_terminal_task(live: Live) -> None:
    sent = await live.rpc("SendMessage", {"message": user_message("order 2?")})
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    done = await live.rpc("SubscribeToTask", {"id": task["id"]})
    assert done["error"]["code"] == -32004
    replay = [
        e async for e in _sse(live, "SubscribeToTask", {"id": task["id"]}, **{"Last-Event-ID": "0"})
    ]
    assert _state(replay[0]) == "TASK_STATE_SUBMITTED"
    assert _state(replay[-1]) == "TASK_STATE_COMPLETED"
    missing = await live.rpc("SubscribeToTask", {"id": "nope"})
    assert missing["error"]["code"] == -32001
