"""Issue 25, clean refusals on the A2A side: ids a client chooses are checked before any
read or write (a typed -32602, nothing created); a task and its run exist only with the
push config the message asked for; no error a client sees carries SQL or parameters."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from sqlalchemy import Engine, text
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from tests._db import migrated, scratch_database
from tests.api.conftest import Live, serving, user_message

NUL = "ctx\x00id"
DATABASE_MESSAGE = "the database could not serve this: try again"  # api/a2a/errors.py


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        tasks = conn.execute(text("SELECT count(*) FROM a2a_task")).scalar_one()
        runs = conn.execute(text("SELECT count(*) FROM agent_run")).scalar_one()
    return int(tasks), int(runs)


def _refused(reply: dict[str, Any]) -> str:
    """The error's message, after checking it is invalid params and names no SQL."""
    error = reply.get("error")
    assert error is not None, reply
    assert error["code"] == -32602, error
    _no_sql(reply)
    return str(error["message"])


def _no_sql(reply: dict[str, Any]) -> None:
    dumped = json.dumps(reply).lower()
    for word in ("select ", "insert ", "update ", "[sql", "parameters", "psycopg", "sqlite"):
        assert word not in dumped, reply


async def test_a_nul_or_overlong_context_id_is_invalid_params_and_creates_no_task_or_run(
    live: Live,
) -> None:
    before = _counts(live.parts.engine)
    for context_id in (NUL, "c" * 65):
        reply = await live.rpc(
            "SendMessage",
            {"message": user_message("order 1?", contextId=context_id),
             "configuration": {"returnImmediately": True}},
        )  # fmt: skip
        assert "contextId" in _refused(reply)
    assert _counts(live.parts.engine) == before


async def test_a_bad_push_config_in_a_send_is_refused_before_any_task_or_run_exists(
    live: Live,
) -> None:
    """Before, on PostgreSQL, the task and its run were created and then the config's
    insert failed (-32603 with the SQL), so a retrying client got a second run."""
    before = _counts(live.parts.engine)
    good = "http://127.0.0.1:9/hook"
    bad_configs = [
        {"id": "c" * 201, "url": good},
        {"id": "cfg\x00", "url": good},
        {"url": good, "token": "t\r\nX-Injected: 1"},
        {"url": good, "authentication": {"scheme": "B" * 51, "credentials": "x"}},
        {"url": "http://2852039166/latest/meta-data/"},  # 169.254.169.254
    ]
    for config in bad_configs:
        reply = await live.rpc(
            "SendMessage",
            {"message": user_message("order 2?"),
             "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config}},
        )  # fmt: skip
        _refused(reply)
    assert _counts(live.parts.engine) == before


async def test_nul_or_overlong_ids_in_reads_are_invalid_params(
    live: Live,
) -> None:
    sent = await live.rpc("SendMessage", {"message": user_message("order 3?")})
    task_id = sent["result"]["task"]["id"]
    for bad in ("t\x00", "t" * 65):
        _refused(await live.rpc("GetTask", {"id": bad}))
        _refused(await live.rpc("CancelTask", {"id": bad}))
        _refused(await live.rpc("ListTaskPushNotificationConfigs", {"taskId": bad}))
        _refused(await live.rpc("ListTasks", {"contextId": bad}))
    for bad in ("c\x00", "c" * 201):
        for method in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
            _refused(await live.rpc(method, {"taskId": task_id, "id": bad}))


@pytest_asyncio.fixture
async def own_live(
    client: Client,
    a2a_settings: ApiSettings,
    tmp_path: Path,
) -> AsyncIterator[Live]:
    """A live server over a database of this test's own (the test breaks it)."""
    with scratch_database("refusal", tmp_path / "refusal.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        settings = a2a_settings.replace(database={"url": url})
        async with serving(client, settings) as served:
            yield served


async def test_a_database_error_is_a_fixed_message_and_a_send_whose_config_fails_creates_nothing(
    own_live: Live,
) -> None:
    """The push-config table is gone (a stand-in for any statement the database refuses):
    the client sees a fixed -32603 message, no SQL and no parameters, and the message that
    asked for a push config created neither its task nor its run."""
    served = own_live
    sent = await served.rpc("SendMessage", {"message": user_message("order 4?")})
    task_id = sent["result"]["task"]["id"]
    with served.parts.engine.begin() as conn:
        conn.execute(text("ALTER TABLE a2a_push_config RENAME TO a2a_push_config_away"))
    before = _counts(served.parts.engine)
    listed = await served.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed["error"]["code"] == -32603 and listed["error"]["message"] == DATABASE_MESSAGE
    _no_sql(listed)
    config = {"id": "secret-config-id", "url": "http://127.0.0.1:9/hook", "token": "tok-9"}
    reply = await served.rpc(
        "SendMessage",
        {"message": user_message("order 5?"),
         "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config}},
    )  # fmt: skip
    assert reply["error"]["code"] == -32603 and reply["error"]["message"] == DATABASE_MESSAGE
    _no_sql(reply)
    assert "secret-config-id" not in json.dumps(reply) and "tok-9" not in json.dumps(reply)
    assert _counts(served.parts.engine) == before
