"""The a2a-sdk Python client against the live server: card, send, stream, get, list,
cancel, multi-turn."""

import asyncio
import uuid

import httpx
import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError

from tests.api.conftest import Live


def _request(
    text: str, *, task_id: str = "", immediate: bool = False, skill: str = ""
) -> SendMessageRequest:
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        msg.task_id = task_id
    if skill:
        msg.metadata.update({"skill": skill})
    req = SendMessageRequest(message=msg)
    req.configuration.return_immediately = immediate
    return req


async def _one_task(stream: object) -> Task:
    tasks = [r.task async for r in stream if r.HasField("task")]  # type: ignore[attr-defined]
    assert len(tasks) == 1
    return tasks[0]


async def wait_state(live: Live, task_id: str, states: set[int], note: str = "") -> Task:
    async with live.client() as sdk:
        for _ in range(600):
            task = await sdk.get_task(GetTaskRequest(id=task_id))
            text = task.status.message.parts[0].text if task.status.message.parts else ""
            if task.status.state in states and note in text:
                return task
            await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {states}")


async def test_the_agent_card_lists_published_profiles_and_the_bearer_scheme(live: Live) -> None:
    async with httpx.AsyncClient() as http:
        card = (await http.get(live.url + "/.well-known/agent-card.json")).json()
    assert sorted(s["id"] for s in card["skills"]) == [
        "fallback",
        "helper",
        "redactor",
        "typed",
    ]  # not vault
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
    assert card["supportedInterfaces"][0]["protocolVersion"] == "1.0"


async def test_send_blocks_until_completed_then_get_and_list(live: Live) -> None:
    async with live.client() as sdk:
        task = await _one_task(sdk.send_message(_request("What about order 1042?")))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "Order 1042 was delivered; its total was 49.99."
        assert [m.role for m in task.history] == [Role.ROLE_USER, Role.ROLE_AGENT]
        got = await sdk.get_task(GetTaskRequest(id=task.id, history_length=1))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED and len(got.history) == 1
        listed = await sdk.list_tasks(ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in listed.tasks] == [task.id] and listed.total_size == 1
        assert listed.next_page_token == ""


async def test_stream_starts_with_the_task_and_ends_completed(live: Live) -> None:
    async with live.client(streaming=True) as sdk:
        events: list[StreamResponse] = [e async for e in sdk.send_message(_request("order 7?"))]
    assert events[0].HasField("task")
    assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    arts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert arts[0].parts[0].text.startswith("Order 1042 was delivered")
    seqs = [e.status_update.metadata["sequence"] for e in events if e.HasField("status_update")]
    assert seqs == sorted(seqs)


async def test_cancel_a_task_waiting_for_approval(live: Live) -> None:
    async with live.client() as sdk:
        task = await _one_task(sdk.send_message(_request("please refund", immediate=True)))
        waiting = await wait_state(live, task.id, {TaskState.TASK_STATE_WORKING}, "approval")
        assert waiting.status.message.role == Role.ROLE_AGENT
        cancelled = await sdk.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await sdk.cancel_task(CancelTaskRequest(id=task.id))


async def test_input_required_then_a_follow_up_continues_the_same_run(live: Live) -> None:
    async with live.client() as sdk:
        first = await _one_task(sdk.send_message(_request("which order is late?")))
        assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert first.status.message.parts[0].text == "Which order number do you mean?"
        second = await _one_task(sdk.send_message(_request("order 1042", task_id=first.id)))
        assert second.id == first.id and second.context_id == first.context_id
        assert second.status.state == TaskState.TASK_STATE_COMPLETED
        assert second.artifacts[0].parts[0].text == "Thanks: order noted, all is well."
        texts = [m.parts[0].text for m in second.history]
        assert texts == [
            "which order is late?",
            "Which order number do you mean?",
            "order 1042",
            "Thanks: order noted, all is well.",
        ]
