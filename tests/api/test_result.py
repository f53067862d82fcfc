"""The result is stored with the completion: the answer ceiling refuses before any task
exists, a tightening mid-run fails the task without content, a failing completion
transaction leaves the task FAILED (never COMPLETED empty), `redacted` keeps redacted text."""

import asyncio
import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from temporalio.client import Client

from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.store.a2a.journal import A2AJournal
from tests.api.conftest import Live, user_message
from tests.workflows._waiting import until_closed


async def _wait(live: Live, task_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    for _ in range(600):
        task: dict[str, Any] = (await live.rpc("GetTask", {"id": task_id}))["result"]
        if done(task):
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} did not get there: {task}")


def _note(task: dict[str, Any]) -> str:
    parts = task["status"].get("message", {}).get("parts", [{}])
    return str(parts[0].get("text", ""))


async def test_a_profile_that_keeps_no_result_is_refused_before_a_task_exists(live: Live) -> None:
    before = (await live.rpc("ListTasks", {}))["result"].get("totalSize", 0)
    reply = await live.rpc(
        "SendMessage", {"message": user_message("order 1?", metadata={"skill": "vault"})}
    )
    assert reply["error"]["code"] == -32004
    assert reply["error"]["data"][0]["reason"] == "RESULT_NOT_RETAINABLE"
    assert (await live.rpc("ListTasks", {}))["result"].get("totalSize", 0) == before


async def test_a_ceiling_tightening_during_the_run_fails_the_task_without_content(
    live: Live,
) -> None:
    # The profile's model fails; its fallback is a provider whose answer level is `none`
    # (AGENTRT_PROVIDER_ANSWER_LEVELS="strict=none"): the published, servable task was
    # accepted, then its ceiling tightened while it ran.
    reply = await live.rpc(
        "SendMessage",
        {"message": user_message("how is 1042 during an outage?", metadata={"skill": "fallback"})},
    )
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"  # the blocking response too
    assert task["metadata"] == {"reason": "RESULT_NOT_RETAINABLE"}
    assert "privacy policy" in _note(task)
    assert "artifacts" not in task
    task_id = task["id"]
    rec = live.store.get(task_id, None)
    assert rec is not None
    run = await live.runtime.status(rec.workflow_id)
    assert run.status is RunStatus.FAILED
    assert run.termination_reason is TerminationReason.RESULT_NOT_RETAINABLE
    llm = [e for e in await live.runtime.events(run.run_id) if e.kind is EventKind.LLM]
    assert llm[-1].payload["model"] == "strict:backup"  # the fallback answered
    got = (await live.rpc("GetTask", {"id": task_id}))["result"]
    events = A2AJournal(live.parts.ctx).events_after(task_id, -1)
    assert "TASK_STATE_COMPLETED" not in [e.state for e in events]
    leaked = json.dumps([e.payload for e in events]) + json.dumps(got) + json.dumps(reply)
    assert "backup provider answers" not in leaked


async def test_a_failing_completion_transaction_leaves_the_task_failed_never_completed_empty(
    make_live: Callable[[Callable[[str], None]], AbstractAsyncContextManager[Live]],
    client: Client,
) -> None:
    def broken(point: str) -> None:
        if point == "complete.before_commit":
            raise RuntimeError("injected: the completion transaction fails")

    async with make_live(broken) as live:
        reply = await live.rpc("SendMessage", {"message": user_message("order 3?")})
        task = reply["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "artifacts" not in task
        assert task["metadata"] == {"reason": "COMPLETION_FAILED"}
        # Its run is over (the workflow closed): nothing can journal anything after it.
        record = live.store.get(task["id"], None)
        assert record is not None
        await until_closed(client, record.workflow_id)
        events = A2AJournal(live.parts.ctx).events_after(task["id"], -1)
        assert "TASK_STATE_COMPLETED" not in [e.state for e in events]
        assert [e.kind for e in events if e.kind == "artifact"] == []


async def test_redacted_answer_level_keeps_redacted_text(live: Live) -> None:
    reply = await live.rpc(
        "SendMessage", {"message": user_message("contact?", metadata={"skill": "redactor"})}
    )
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "Write to *** for details."
