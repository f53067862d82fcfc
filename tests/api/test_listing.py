"""ListTasks: newest status first, cursor paging that stays whole while tasks are being
created; purge: a removed run takes its task with it."""

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from a2a.types import GetTaskRequest, ListTasksRequest, TaskState
from a2a.utils.errors import TaskNotFoundError

from agentrt.store.a2a.purge import purge_runs
from tests.api.conftest import Live, user_message


async def _send(live: Live, text: str, context_id: str, immediate: bool = False) -> str:
    msg = user_message(text, contextId=context_id)
    reply = await live.rpc(
        "SendMessage", {"message": msg, "configuration": {"returnImmediately": immediate}}
    )
    return str(reply["result"]["task"]["id"])


async def test_paging_is_whole_while_tasks_are_being_created(live: Live) -> None:
    ctx = f"ctx-{uuid.uuid4().hex[:8]}"
    settled = [await _send(live, f"order {i}?", ctx) for i in range(7)]  # blocking: settled

    async def create_more() -> list[str]:
        return [await _send(live, "order 99?", ctx, immediate=True) for _ in range(5)]

    creator = asyncio.create_task(create_more())
    seen: list[str] = []
    token = ""
    async with live.client() as sdk:
        while True:
            page = await sdk.list_tasks(
                ListTasksRequest(context_id=ctx, page_size=2, page_token=token)
            )
            assert page.page_size == 2 and len(page.tasks) <= 2
            assert all(not t.artifacts for t in page.tasks)  # includeArtifacts defaults off
            seen += [t.id for t in page.tasks]
            token = page.next_page_token
            if not token:
                break
            await asyncio.sleep(0.05)
        created = await creator
        assert len(seen) == len(set(seen))  # nothing twice
        assert set(settled) <= set(seen)  # nothing settled was skipped
        assert [s for s in seen if s in settled] == list(reversed(settled))  # newest first
        total = await sdk.list_tasks(ListTasksRequest(context_id=ctx, page_size=100))
        assert total.total_size == 12 and set(created) <= {t.id for t in total.tasks}
        stamps = [t.status.timestamp.ToDatetime() for t in total.tasks]
        assert stamps == sorted(stamps, reverse=True)


async def test_list_filters_by_status_and_timestamp_and_can_include_artifacts(
    live: Live,
) -> None:
    ctx = f"ctx-{uuid.uuid4().hex[:8]}"
    done = await _send(live, "order 1?", ctx)
    asking = await _send(live, "which order?", ctx)
    async with live.client() as sdk:
        completed = await sdk.list_tasks(
            ListTasksRequest(
                context_id=ctx, status=TaskState.TASK_STATE_COMPLETED, include_artifacts=True
            )
        )
        assert [t.id for t in completed.tasks] == [done]
        assert completed.tasks[0].artifacts[0].parts[0].text.startswith("Order 1042")
        waiting = await sdk.list_tasks(
            ListTasksRequest(context_id=ctx, status=TaskState.TASK_STATE_INPUT_REQUIRED)
        )
        assert [t.id for t in waiting.tasks] == [asking]
        later = ListTasksRequest(context_id=ctx)
        later.status_timestamp_after.FromDatetime(datetime.now(UTC) + timedelta(minutes=5))
        assert (await sdk.list_tasks(later)).total_size == 0
        none = await sdk.list_tasks(ListTasksRequest(context_id=ctx, history_length=0))
        assert all(not t.history for t in none.tasks)


async def test_a_purged_run_takes_its_task_and_journal_with_it(live: Live) -> None:
    task_id = await _send(live, "order 6?", f"ctx-{uuid.uuid4().hex[:8]}")
    rec = live.store.get(task_id, None)
    assert rec is not None
    assert await asyncio.to_thread(purge_runs, live.parts.ctx, [rec.workflow_id]) == 1
    async with live.client() as sdk:
        try:
            await sdk.get_task(GetTaskRequest(id=task_id))
            raise AssertionError("a purged task was found")
        except TaskNotFoundError:
            pass
