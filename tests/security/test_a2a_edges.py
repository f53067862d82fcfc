"""Issue 41, item 5: two A2A edges a conformance run showed.

- The REST (HTTP+JSON) binding answered 401 and 413 with JSON-RPC error bodies; it
  answers in its own format (google.rpc.Status with an ErrorInfo), as it does 415.
- A first message resent under the same messageId but with another text, other parts,
  metadata or push config got the first task back, the difference dropped in silence. It
  is refused (-32602 / REST 400) naming the task; a true resend still gets the first task,
  and nothing is created or changed either way."""

import uuid
from typing import Any

import httpx

from agentrt.store.a2a.push import A2APushStore
from agentrt.store.a2a.tasks import A2AStore
from tests.api.conftest import VERSION, Live

IMMEDIATE = {"returnImmediately": True}


def _rest_error(reply: httpx.Response, code: int, status: str, reason: str) -> None:
    assert reply.status_code == code, reply.text
    error = reply.json()["error"]
    assert (error["code"], error["status"]) == (code, status), error
    assert error["details"][0]["reason"] == reason
    assert "jsonrpc" not in reply.json()


async def test_the_rest_binding_answers_401_and_413_in_its_own_error_format(live: Live) -> None:
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "order 1?"}]}}  # fmt: skip
    async with httpx.AsyncClient(timeout=60) as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            sent = await http.post(live.url + "/rest/message:send", json=body,
                                   headers={**headers, **VERSION})  # fmt: skip
            _rest_error(sent, 401, "UNAUTHENTICATED", "UNAUTHENTICATED")
            assert sent.headers["www-authenticate"].startswith("Bearer")
            got = await http.get(live.url + "/rest/tasks/x", headers={**headers, **VERSION})
            _rest_error(got, 401, "UNAUTHENTICATED", "UNAUTHENTICATED")
        big = {"message": {**body["message"], "parts": [{"text": "x" * 70_000}]}}
        declared = await http.post(live.url + "/rest/message:send", json=big,
                                   headers=live.headers())  # fmt: skip
        _rest_error(declared, 413, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE")

        async def chunks() -> Any:
            for _ in range(70):
                yield b"x" * 1000

        json_headers = {**live.headers(), "Content-Type": "application/json"}
        chunked = await http.post(
            live.url + "/rest/message:send", content=chunks(), headers=json_headers
        )
        _rest_error(chunked, 413, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE")
        # The JSON-RPC binding keeps its own shape for the same refusals.
        rpc = await http.post(live.url + "/", json={"jsonrpc": "2.0", "id": 1}, headers=VERSION)
        assert rpc.status_code == 401 and rpc.json()["error"]["code"] == -32600


def _first(text: str, message_id: str, context_id: str, **more: Any) -> dict[str, Any]:
    return {"messageId": message_id, "contextId": context_id, "role": "ROLE_USER",
            "parts": [{"text": text}], **more}  # fmt: skip


def _params(message: dict[str, Any], push_url: str | None = None, **config: Any) -> dict[str, Any]:
    configuration: dict[str, Any] = {**IMMEDIATE, **config}
    if push_url is not None:
        configuration["taskPushNotificationConfig"] = {"id": "c1", "url": push_url}
    return {"message": message, "configuration": configuration}


async def test_a_reused_first_message_id_that_asks_something_else_is_refused(live: Live) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    hook = "http://127.0.0.1:9/first"
    first = await live.rpc("SendMessage", _params(_first("order 4?", mid, ctx), hook))
    task_id = first["result"]["task"]["id"]
    # A true resend, asking for the answer another way, gets the first task.
    again = _params(_first("order 4?", mid, ctx), hook, returnImmediately=False, historyLength=1)
    same = await live.rpc("SendMessage", again)
    assert same["result"]["task"]["id"] == task_id
    without_context = await live.rpc("SendMessage", _params(_first("order 4?", mid, ""), hook))
    assert without_context["result"]["task"]["id"] == task_id
    for changed in (
        _params(_first("order 5?", mid, ctx), hook),  # another text
        _params(
            {**_first("order 4?", mid, ctx), "parts": [{"text": "order 4?"}, {"text": "and 5"}]},
            hook,
        ),  # another part
        _params(_first("order 4?", mid, ctx, metadata={"skill": "typed"}), hook),  # metadata
        _params(_first("order 4?", mid, ctx), "http://127.0.0.1:9/other"),  # push config
        _params(_first("order 4?", mid, ctx)),  # no push config
        _params(_first("order 4?", mid, str(uuid.uuid4())), hook),  # another context
    ):
        refused = await live.rpc("SendMessage", changed)
        assert refused["error"]["code"] == -32602, refused
        message = refused["error"]["message"]
        assert mid in message and task_id in message and "new messageId" in message
    async with httpx.AsyncClient(timeout=60) as http:
        rest = await http.post(live.url + "/rest/message:send",
                               json=_params(_first("order 6?", mid, ctx), hook),
                               headers=live.headers())  # fmt: skip
    _rest_error(rest, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    # Nothing was created or changed: one task, its first text, its first push config.
    assert A2AStore(live.parts.ctx).page(owner="alice", context_id=ctx).total == 1
    rec = A2AStore(live.parts.ctx).get(task_id, "alice")
    assert rec is not None and rec.history[0]["parts"] == [{"text": "order 4?"}]
    assert [c.url for c in A2APushStore(live.parts.ctx).configs(task_id)] == [hook]


async def test_a_streamed_resend_that_asks_something_else_is_refused_too(live: Live) -> None:
    ctx, mid = str(uuid.uuid4()), str(uuid.uuid4())
    first = await live.rpc("SendMessage", _params(_first("order 8?", mid, ctx)))
    assert "result" in first, first
    async with httpx.AsyncClient(timeout=60) as http:
        reply = await http.post(
            live.url + "/",
            json={"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
                  "params": _params(_first("order 9?", mid, ctx))},
            headers={**live.headers(), "Accept": "text/event-stream"},
        )  # fmt: skip
    assert "-32602" in reply.text and "new messageId" in reply.text, reply.text
    assert A2AStore(live.parts.ctx).page(owner="alice", context_id=ctx).total == 1
