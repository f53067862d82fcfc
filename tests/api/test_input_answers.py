"""`POST /runs/{id}/answers` with `kind: input` (api/operator/answers.py): an operator
answers a run waiting for input as the token's principal (the `input` event names it),
against a live server, its worker, the real dev server and database. The run here waits
because its model asked over A2A (the same input pause a remote agent's question opens:
tests/activities/test_remote_input.py). Each refusal is a typed 4xx that changes nothing."""

import uuid

import httpx
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

from tests.api.conftest import Live
from tests.api.ops_helpers import LOOKUP, error_type, http, name, start, token, wait_status

OPERATOR = ("runs:read-all", "runs:decide")


async def waiting_run(live: Live) -> str:
    """A run waiting for input: an A2A task whose model asked a question."""
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                  parts=[Part(text="two questions, please")])  # fmt: skip
    async with live.client() as sdk:
        tasks = [r.task async for r in sdk.send_message(SendMessageRequest(message=msg))]
    assert tasks and tasks[-1].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    rec = live.store.get(tasks[-1].id, None)
    assert rec is not None
    return rec.workflow_id


def input_answer(text: str, message_id: str = "op-1") -> dict[str, str]:
    return {"kind": "input", "message_id": message_id, "text": text}


async def _events(api: httpx.AsyncClient, run_id: str, kind: str) -> list[dict[str, object]]:
    reply = await api.get(f"/runs/{run_id}/events")
    assert reply.status_code == 200, reply.text
    return [e for e in reply.json()["events"] if e["kind"] == kind]


async def test_an_operator_answers_a_run_waiting_for_input_as_its_principal(live: Live) -> None:
    run_id = await waiting_run(live)
    who = name("olga")
    async with http(live, token(live, who, *OPERATOR)) as api:
        reply = await api.post(f"/runs/{run_id}/answers", json=input_answer("order 1042"))
        assert reply.status_code == 200, reply.text
        assert reply.json()["kind"] == "input" and reply.json()["answered_by"] == who
        (given,) = await _events(api, run_id, "input")
        assert given["payload"]["sent_by"] == who  # type: ignore[index]
        # The model's second question: the run waits again, for a new message.
        await wait_status(api, run_id, "WAITING_FOR_INPUT", seconds=60)
        assert len(await _events(api, run_id, "input_requested")) == 2


async def test_input_refusals_are_typed_and_change_nothing(live: Live) -> None:
    """(Over the prompt cap: tests/security/test_input_caps.py.)"""
    run_id = await waiting_run(live)
    async with (
        http(live, token(live, name("reader"), "runs:read-all")) as reader,
        http(live, token(live, name("op"), *OPERATOR, "runs:start")) as api,
    ):
        refused = await reader.post(f"/runs/{run_id}/answers", json=input_answer("order 1042"))
        assert refused.status_code == 403 and error_type(refused) == "forbidden"
        blank = await api.post(f"/runs/{run_id}/answers", json=input_answer(""))
        assert blank.status_code == 400 and error_type(blank) == "invalid_request"
        assert await _events(api, run_id, "input") == []  # none of them reached the run
        done = await start(api, "helper", LOOKUP)
        await wait_status(api, done["run_id"], "COMPLETED", seconds=60)
        refused = await api.post(f"/runs/{done['run_id']}/answers", json=input_answer("late"))
        assert refused.status_code == 409 and error_type(refused) == "not_awaiting_input"
