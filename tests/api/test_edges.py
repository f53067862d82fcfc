"""A2A edges: a repeated messageId, REST status codes, non-JSON bodies, a subscription that
outlives INPUT_REQUIRED, and the Agent Card's Last-Modified."""

import asyncio
import time
import uuid
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import httpx
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH

from tests.api.conftest import Live, user_message

INPUT_REQUIRED, COMPLETED = TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_COMPLETED


def _message(text: str, task_id: str = "", message_id: str = "") -> SendMessageRequest:
    msg = Message(
        message_id=message_id or str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)]
    )
    if task_id:
        msg.task_id = task_id
    return SendMessageRequest(message=msg)


async def _task(stream: Any) -> Task:
    tasks = [r.task async for r in stream if r.HasField("task")]
    assert len(tasks) == 1
    return tasks[0]


async def _asked(sdk: Any, request: SendMessageRequest) -> Task:
    """Send `request`; the task it returns waits for the user's input."""
    task = await _task(sdk.send_message(request))
    assert task.status.state == INPUT_REQUIRED
    return task


def _texts(task: Task) -> list[str]:
    return [m.parts[0].text for m in task.history]


async def test_a_repeated_message_id_returns_the_task_at_once_and_changes_nothing(
    live: Live,
) -> None:
    async with live.client() as sdk:
        first = await _asked(sdk, _message("two questions, please"))
        answer = str(uuid.uuid4())
        second = await _asked(sdk, _message("order 1042", first.id, answer))
        assert second.status.message.parts[0].text == "Second question, which day?"
        rec_before = live.store.get(first.id, None)
        assert rec_before is not None

        began = time.monotonic()
        repeat = await _task(sdk.send_message(_message("order 1042", first.id, answer)))
        took = time.monotonic() - began
        assert took < 5, f"the repeat blocked for {took:.1f} s"
        assert repeat.id == first.id and repeat.status.state == INPUT_REQUIRED
        assert _texts(repeat) == _texts(second)  # not added to the history again
        rec_after = live.store.get(first.id, None)
        assert rec_after is not None
        assert rec_after.journal_head == rec_before.journal_head  # no event either
        assert rec_after.history == rec_before.history

        # The repeat of the very first message is a repeat too, not a new question.
        opening = first.history[0].message_id
        again = await _task(sdk.send_message(_message("two questions, please", first.id, opening)))
        assert _texts(again) == _texts(second)

        # The run did not take the repeat as the answer to its second question.
        done = await _task(sdk.send_message(_message("monday", first.id)))
        assert done.status.state == COMPLETED
        assert _texts(done).count("order 1042") == 1
        assert _texts(done)[-2:] == ["monday", "Thanks: both answers noted."]
        # A repeat once the task is terminal still answers with the task, not an error.
        late = await _task(sdk.send_message(_message("order 1042", first.id, answer)))
        assert late.status.state == COMPLETED and _texts(late) == _texts(done)


async def _tasks_of(live: Live) -> int:
    reply = await live.rpc("ListTasks", {"pageSize": 100})
    return int(reply["result"].get("totalSize", 0))


async def test_rest_status_codes_for_a_bad_content_type_and_a_task_not_cancelable(
    live: Live,
) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        before = await _tasks_of(live)
        file_part = user_message("order 3?")
        file_part["parts"] = [{"url": "http://127.0.0.1/x.pdf", "mediaType": "application/pdf"}]
        refused = await http.post(
            live.url + "/rest/message:send", json={"message": file_part}, headers=live.headers()
        )
        assert refused.status_code == 415, refused.text
        assert refused.json()["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
        assert await _tasks_of(live) == before

        sent = await http.post(
            live.url + "/rest/message:send",
            json={"message": user_message("order 12?")},
            headers=live.headers(),
        )
        task = sent.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        cancel = await http.post(
            live.url + f"/rest/tasks/{task['id']}:cancel", json={}, headers=live.headers()
        )
        assert cancel.status_code == 409, cancel.text
        assert cancel.json()["error"]["details"][0]["reason"] == "TASK_NOT_CANCELABLE"
    # The JSON-RPC binding keeps its codes.
    rpc = await live.rpc("CancelTask", {"id": task["id"]})
    assert rpc["error"]["code"] == -32002


async def test_a_body_that_is_not_declared_json_is_refused_on_both_bindings(live: Live) -> None:
    before = await _tasks_of(live)
    rpc_body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
        '{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "order 4?"}]}}}'
    )
    rest_body = '{"message": {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "x"}]}}'
    async with httpx.AsyncClient(timeout=60) as http:
        for path, body in (("/", rpc_body), ("/rest/message:send", rest_body)):
            for content_type in ("text/plain", "application/x-www-form-urlencoded", "text/json"):
                headers = {**live.headers(), "Content-Type": content_type}
                reply = await http.post(live.url + path, content=body, headers=headers)
                assert reply.status_code == 415, (path, content_type, reply.text)
                assert "Content-Type" in reply.text
            ok = await http.post(
                live.url + path,
                content=body,
                headers={**live.headers(), "Content-Type": "application/a2a+json; charset=utf-8"},
            )
            assert ok.status_code == 200, ok.text
    assert await _tasks_of(live) == before + 2  # only the two JSON requests made tasks


async def test_subscribing_to_an_input_required_task_stays_open_until_it_is_terminal(
    live: Live,
) -> None:
    async with live.client() as sdk:
        first = await _asked(sdk, _message("which order is late?"))
    states: list[int] = []
    snapshot = asyncio.Event()

    async def subscribe() -> None:
        async with live.client(streaming=True) as sdk:
            async for event in sdk.subscribe(SubscribeToTaskRequest(id=first.id)):
                if event.HasField("task"):
                    states.append(event.task.status.state)
                    snapshot.set()
                elif event.HasField("status_update"):
                    states.append(event.status_update.status.state)

    watcher = asyncio.create_task(subscribe())
    await asyncio.wait_for(snapshot.wait(), 30)
    # main closed the stream right after the snapshot: then it would hold the snapshot's
    # INPUT_REQUIRED alone, never the COMPLETED that the answer below leads to.
    assert not watcher.done(), f"the stream closed at {states}"
    async with live.client() as sdk:
        await sdk.send_message(_message("order 1042", first.id)).__anext__()
        await asyncio.wait_for(watcher, 30)
        final = await sdk.get_task(GetTaskRequest(id=first.id))
    assert states[0] == INPUT_REQUIRED
    assert states[-1] == COMPLETED == final.status.state


async def test_the_agent_card_has_last_modified_and_honours_if_modified_since(
    live: Live,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await http.get(live.url + AGENT_CARD_WELL_KNOWN_PATH)
        assert card.status_code == 200
        modified = parsedate_to_datetime(card.headers["last-modified"])
        assert modified.tzinfo is not None
        assert card.headers["etag"] and "max-age" in card.headers["cache-control"]
        stamp = card.headers["last-modified"]
        same = await http.get(
            live.url + AGENT_CARD_WELL_KNOWN_PATH, headers={"If-Modified-Since": stamp}
        )
        assert same.status_code == 304 and same.content == b""
        assert same.headers["last-modified"] == stamp and same.headers["etag"]
        earlier = format_datetime(modified.replace(year=modified.year - 1), usegmt=True)
        older = await http.get(
            live.url + AGENT_CARD_WELL_KNOWN_PATH, headers={"If-Modified-Since": earlier}
        )
        assert older.status_code == 200 and older.json()["name"]
        # If-None-Match wins over If-Modified-Since (RFC 9110 13.1.3).
        stale_tag = await http.get(
            live.url + AGENT_CARD_WELL_KNOWN_PATH,
            headers={"If-Modified-Since": stamp, "If-None-Match": 'W/"other"'},
        )
        assert stale_tag.status_code == 200
        garbage = await http.get(
            live.url + AGENT_CARD_WELL_KNOWN_PATH, headers={"If-Modified-Since": "yesterday"}
        )
        assert garbage.status_code == 200
