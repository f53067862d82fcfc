"""Who may call, and bad input: spec error codes, no state change, never a 500."""

from typing import Any

import httpx

from tests.api.conftest import KEYS, Live, user_message


async def _count(live: Live, who: str = "alice") -> int:
    reply = await live.rpc("ListTasks", {"pageSize": 1}, who)
    return int(reply["result"].get("totalSize", 0))


def _code(reply: dict[str, Any]) -> int:
    return int(reply["error"]["code"])


def _reason(reply: dict[str, Any]) -> str:
    return str(reply["error"]["data"][0]["reason"])


async def test_requests_without_valid_credentials_get_401_and_change_nothing(live: Live) -> None:
    before = await _count(live)
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": user_message("order 1?")}}  # fmt: skip
    async with httpx.AsyncClient() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEYS["alice"]}):
            reply = await http.post(
                live.url + "/", json=body, headers={**headers, "A2A-Version": "1.0"}
            )
            assert reply.status_code == 401
            assert reply.headers["www-authenticate"].startswith("Bearer")
    assert await _count(live) == before


async def test_a_caller_sees_only_its_own_tasks(live: Live) -> None:
    sent = await live.rpc(
        "SendMessage",
        {"message": user_message("order 5?"), "configuration": {"returnImmediately": True}},
    )
    task_id = sent["result"]["task"]["id"]
    theirs = await live.rpc("GetTask", {"id": task_id}, who="bob")
    assert _code(theirs) == -32001 and _reason(theirs) == "TASK_NOT_FOUND"
    assert _code(await live.rpc("CancelTask", {"id": task_id}, who="bob")) == -32001
    listed = await live.rpc("ListTasks", {}, who="bob")
    assert task_id not in [t["id"] for t in listed["result"]["tasks"]]
    mine = await live.rpc("GetTask", {"id": task_id})
    assert mine["result"]["id"] == task_id


async def test_bad_input_gets_spec_codes_and_changes_nothing(live: Live) -> None:
    before = await _count(live)
    async with httpx.AsyncClient() as http:
        raw = await http.post(live.url + "/", content=b"{not json", headers=live.headers())
        assert raw.status_code == 200 and raw.json()["error"]["code"] == -32700
        big = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
               "params": {"message": user_message("x" * 70_000)}}  # fmt: skip
        too_big = await http.post(live.url + "/", json=big, headers=live.headers())
        assert too_big.status_code == 413 and too_big.json()["error"]["code"] == -32600
    assert _code(await live.rpc("NoSuchMethod", {})) == -32601
    missing_id = {"message": {"role": "ROLE_USER", "parts": [{"text": "order 1?"}]}}
    assert _code(await live.rpc("SendMessage", missing_id)) == -32602
    assert (
        _code(await live.rpc("SendMessage", {"message": user_message("order", role="ROLE_AGENT")}))
        == -32602
    )
    assert _code(await live.rpc("GetTask", {"id": "nope"})) == -32001
    assert _code(await live.rpc("GetTask", {"id": "nope", "historyLength": -1})) == -32602
    assert _code(await live.rpc("ListTasks", {"pageSize": 101})) == -32602
    assert _code(await live.rpc("ListTasks", {"pageToken": "garbage!"})) == -32602
    assert _code(await live.rpc("CancelTask", {"id": "nope"})) == -32001
    unknown_task = user_message("hello", taskId="nope")
    assert _code(await live.rpc("SendMessage", {"message": unknown_task})) == -32001
    old = await live.rpc(
        "SendMessage", {"message": user_message("order 1?")}, **{"A2A-Version": "0.3"}
    )
    assert _code(old) == -32009
    file_part = user_message("x")
    file_part["parts"] = [{"url": "https://example.com/a.pdf"}]
    assert _code(await live.rpc("SendMessage", {"message": file_part})) == -32005
    skill = user_message("order 1?", metadata={"skill": "internal"})
    assert _code(await live.rpc("SendMessage", {"message": skill})) == -32602
    bad_push = {"message": user_message("order 1?"), "configuration": {
        "taskPushNotificationConfig": {"url": "https://user:pw@example.com/hook"}}}  # fmt: skip
    assert _code(await live.rpc("SendMessage", bad_push)) == -32602
    ftp = {"message": user_message("order 1?"), "configuration": {
        "taskPushNotificationConfig": {"url": "ftp://example.com/hook"}}}  # fmt: skip
    assert _code(await live.rpc("SendMessage", ftp)) == -32602
    assert await _count(live) == before


async def test_a_message_to_a_terminal_task_is_unsupported(live: Live) -> None:
    done = await live.rpc("SendMessage", {"message": user_message("order 9?")})
    task = done["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    again = await live.rpc("SendMessage", {"message": user_message("more", taskId=task["id"])})
    assert _code(again) == -32004
    wrong_ctx = user_message("more", taskId=task["id"], contextId="other")
    assert _code(await live.rpc("SendMessage", {"message": wrong_ctx})) == -32602
    after = await live.rpc("GetTask", {"id": task["id"]})
    assert len(after["result"]["history"]) == 2  # nothing was added


async def test_the_rest_binding_serves_the_same_tasks(live: Live) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        sent = await http.post(
            live.url + "/rest/message:send",
            json={"message": user_message("order 12?")},
            headers=live.headers(),
        )
        assert sent.status_code == 200, sent.text
        task = sent.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        got = await http.get(live.url + f"/rest/tasks/{task['id']}", headers=live.headers())
        assert got.status_code == 200 and got.json()["id"] == task["id"]
        theirs = await http.get(live.url + f"/rest/tasks/{task['id']}", headers=live.headers("bob"))
        assert theirs.status_code == 404
        anonymous = await http.get(live.url + f"/rest/tasks/{task['id']}")
        assert anonymous.status_code == 401
