"""Issue 27 item 6: a first message resent with the same messageId by the same caller
returns the first task and starts no second run, however the resends race. Another
caller's messageId is its own: it never finds (or learns of) someone else's task."""

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from agentrt.store.a2a.tasks import A2AStore, FirstMessageTaken
from tests.api.conftest import Live

IMMEDIATE = {"returnImmediately": True}


def _first(text: str, message_id: str, context_id: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "contextId": context_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }


def _tasks_in(live: Live, owner: str, context_id: str) -> int:
    return A2AStore(live.parts.ctx).page(owner=owner, context_id=context_id).total


async def _send(live: Live, message: dict[str, Any], who: str = "alice") -> dict[str, Any]:
    reply = await live.rpc("SendMessage", {"message": message, "configuration": IMMEDIATE}, who)
    assert "result" in reply, reply
    task: dict[str, Any] = reply["result"]["task"]
    return task


async def test_a_resent_first_message_returns_the_first_task_and_starts_no_second_run(
    live: Live,
) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    first = await _send(live, _first("order 4?", mid, ctx))
    again = await _send(live, _first("order 4?", mid, ctx))
    assert again["id"] == first["id"]
    # The blocking form of the resend, and the REST binding, answer with the same task.
    blocking = await live.rpc("SendMessage", {"message": _first("order 4?", mid, ctx)})
    assert blocking["result"]["task"]["id"] == first["id"]
    async with httpx.AsyncClient(timeout=60) as http:
        rest = await http.post(
            live.url + "/rest/message:send",
            json={"message": _first("order 4?", mid, ctx)},
            headers=live.headers(),
        )
    assert rest.status_code == 200, rest.text
    assert rest.json()["task"]["id"] == first["id"]
    assert _tasks_in(live, "alice", ctx) == 1
    rec = A2AStore(live.parts.ctx).get(first["id"], "alice")
    assert rec is not None and [m["messageId"] for m in rec.history][:1] == [mid]
    # One run: the task's run is the only one begun for it, and it ends once.
    view = await asyncio.wait_for(live.runtime.wait(rec.workflow_id), 60)
    assert view.status.value == "COMPLETED"


async def test_concurrent_resends_of_a_first_message_make_one_task(live: Live) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    sent = await asyncio.gather(*(_send(live, _first("order 7?", mid, ctx)) for _ in range(6)))
    assert len({t["id"] for t in sent}) == 1
    assert _tasks_in(live, "alice", ctx) == 1


async def test_another_caller_reusing_a_message_id_gets_its_own_task_and_no_leak(
    live: Live,
) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    alices, bobs = await asyncio.gather(
        _send(live, _first("alice: order 4?", mid, ctx), "alice"),
        _send(live, _first("bob: order 9?", mid, ctx), "bob"),
    )
    assert alices["id"] != bobs["id"]
    # Each sees only its own task, with its own text; the other's stays unknown to it.
    assert _tasks_in(live, "alice", ctx) == 1 and _tasks_in(live, "bob", ctx) == 1
    bob_again = await _send(live, _first("bob: order 9?", mid, ctx), "bob")
    assert bob_again["id"] == bobs["id"]
    assert "alice" not in str(bob_again)
    peek = await live.rpc("GetTask", {"id": alices["id"]}, "bob")
    assert peek["error"]["code"] == -32001


async def test_a_message_id_longer_than_its_column_is_refused_and_creates_nothing(
    live: Live,
) -> None:
    ctx = str(uuid.uuid4())
    reply = await live.rpc(
        "SendMessage", {"message": _first("order 4?", "m" * 201, ctx), "configuration": IMMEDIATE}
    )
    assert reply["error"]["code"] == -32602
    assert "messageId" in reply["error"]["message"]
    assert _tasks_in(live, "alice", ctx) == 0


def test_the_database_refuses_a_second_task_for_the_same_callers_first_message(
    live: Live,
) -> None:
    """The unique constraint itself, under the service's look-up: the race's last guard."""
    store, mid = A2AStore(live.parts.ctx), str(uuid.uuid4())
    message = {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": "x"}]}

    def create(owner: str) -> str:
        task_id = str(uuid.uuid4())
        store.create(
            task_id=task_id, context_id=str(uuid.uuid4()), workflow_id=str(uuid.uuid4()),
            owner=owner, profile="helper", answer_level="full", message=message,
            first_message_id=mid,
        )  # fmt: skip
        return task_id

    first = create("carol")
    with pytest.raises(FirstMessageTaken) as taken:
        create("carol")
    assert taken.value.task.id == first
    assert store.get(first, "carol") is not None
    assert create("dave") != first  # another owner's id is its own
