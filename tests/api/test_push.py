"""Push notifications: config CRUD with URL validation, and delivery of every journal event
in order, with the configured Authorization header, retried after a failed first attempt."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.types import Receive, Scope, Send

from agentrt.store.a2a.push import A2APushStore
from tests._asgi import on_localhost
from tests.api.conftest import Live, user_message


class Receiver:
    """A webhook on 127.0.0.1 that fails its first request, then accepts."""

    def __init__(self) -> None:
        self.calls = 0
        self.accepted: list[tuple[dict[str, str], dict[str, Any]]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        self.calls += 1
        code = 500 if self.calls == 1 else 200
        if code == 200:
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.accepted.append((headers, json.loads(body)))
        await send({"type": "http.response.start", "status": code, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@asynccontextmanager
async def receiving() -> AsyncIterator[tuple[str, Receiver]]:
    receiver = Receiver()
    async with on_localhost(receiver) as base:
        yield f"{base}/hook", receiver


def _seq(body: dict[str, Any]) -> int:
    return int(next(iter(body.values()))["metadata"]["sequence"])


async def test_push_delivers_every_event_in_order_after_a_failed_first_attempt(
    live: Live,
) -> None:
    async with receiving() as (url, receiver):
        config = {"url": url, "token": "tok-1",
                  "authentication": {"scheme": "Bearer", "credentials": "push-secret"}}  # fmt: skip
        sent = await live.rpc(
            "SendMessage",
            {"message": user_message("order 4?"),
             "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config}},
        )  # fmt: skip
        task_id = sent["result"]["task"]["id"]
        for _ in range(400):
            states = [
                b.get("statusUpdate", {}).get("status", {}).get("state")
                for _, b in receiver.accepted
            ]
            if "TASK_STATE_COMPLETED" in states:
                break
            await asyncio.sleep(0.05)
        head = live.store.get(task_id, None)
        assert head is not None
        seqs = [_seq(body) for _, body in receiver.accepted]
        assert seqs == list(range(0, head.journal_head + 1))  # all, in order, once
        headers, first = receiver.accepted[0]
        assert headers["authorization"] == "Bearer push-secret"
        assert headers["content-type"] == "application/a2a+json"
        assert first["statusUpdate"]["taskId"] == task_id
        assert any("artifactUpdate" in body for _, body in receiver.accepted)
        configs = A2APushStore(live.parts.ctx).configs(task_id)
        records = A2APushStore(live.parts.ctx).deliveries(task_id, configs[0].id)
        assert records[0].attempts == 2 and records[0].status == "delivered"
        assert all(r.status == "delivered" for r in records)


async def test_push_config_crud_validates_urls_and_never_echoes_credentials(live: Live) -> None:
    # Blocking: the task is settled, so nothing is left to deliver to these (unreachable)
    # loopback URLs; no test ever targets an address off this machine.
    sent = await live.rpc("SendMessage", {"message": user_message("order 8?")})
    task_id = sent["result"]["task"]["id"]
    created = await live.rpc(
        "CreateTaskPushNotificationConfig",
        {"taskId": task_id, "id": "c1", "url": "http://127.0.0.1:9/a2a",
         "authentication": {"scheme": "Bearer", "credentials": "s3cret"}},
    )  # fmt: skip
    assert created["result"]["id"] == "c1" and "credentials" not in json.dumps(created)
    got = await live.rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
    assert got["result"]["url"] == "http://127.0.0.1:9/a2a"
    listed = await live.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert [c["id"] for c in listed["result"]["configs"]] == ["c1"]
    for bad in ("http://u:p@127.0.0.1:9/", "file:///etc/passwd", "http://10.0.0.5/x"):
        refused = await live.rpc(
            "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": bad}
        )
        assert refused["error"]["code"] == -32602, bad
    other = await live.rpc(
        "CreateTaskPushNotificationConfig",
        {"taskId": task_id, "url": "http://127.0.0.1:9/b"},
        who="bob",
    )
    assert other["error"]["code"] == -32001
    for _ in range(2):  # delete is idempotent
        deleted = await live.rpc(
            "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"}
        )
        assert "error" not in deleted
    listed = await live.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed["result"].get("configs", []) == []
    gone = await live.rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
    assert gone["error"]["code"] == -32001
