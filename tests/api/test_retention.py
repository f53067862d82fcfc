"""Retention as a Temporal Schedule: a pass purges settled runs past their window, cancels
then purges runs waiting past theirs; a purged run is gone from the database, from Temporal
and from A2A."""

import asyncio
import uuid

import pytest
from a2a.types import GetTaskRequest
from a2a.utils.errors import TaskNotFoundError
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, ScheduleActionStartWorkflow

from agentrt.activities.ports import no_faults
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError, RunNotFoundError
from agentrt.contracts.ids import ACT_RETENTION_UNSETTLED, WORKFLOW_RETENTION
from agentrt.contracts.retention import RetentionPolicy, RetentionReport
from agentrt.core.settings import Settings
from agentrt.starter import cli, schedules
from agentrt.workers.fleet import maintenance_worker
from agentrt.workflows.retention import SETTLE_CHECKS, STALLED_CHECKS
from tests.api.conftest import Live, user_message
from tests.workflows._waiting import until_gone, until_status
from tests.workflows.test_failures import MakeRuntime

SECOND = 1 / 86400  # in days


async def _send(live: Live, text: str, immediate: bool) -> str:
    msg = user_message(text, contextId=f"ctx-{uuid.uuid4().hex[:8]}")
    reply = await live.rpc(
        "SendMessage", {"message": msg, "configuration": {"returnImmediately": immediate}}
    )
    return str(reply["result"]["task"]["id"])


async def _pass(client: Client, live: Live, queue: str, policy: RetentionPolicy) -> RetentionReport:
    return await client.execute_workflow(
        WORKFLOW_RETENTION,
        policy,
        id=f"retention-{uuid.uuid4().hex[:8]}",
        task_queue=queue,
        result_type=RetentionReport,
    )


async def test_a_pass_purges_settled_and_stale_runs_everywhere(client: Client, live: Live) -> None:
    settled_task = await _send(live, "order 6?", immediate=False)
    waiting_task = await _send(live, "Please refund order 1042", immediate=True)
    settled_run = live.store.get(settled_task, None).workflow_id  # type: ignore[union-attr]
    waiting_run = live.store.get(waiting_task, None).workflow_id  # type: ignore[union-attr]
    assert (await live.runtime.status(settled_run)).status is RunStatus.COMPLETED
    await until_status(live.runtime, waiting_run, RunStatus.WAITING_FOR_APPROVAL)
    queue = f"maint-{uuid.uuid4().hex[:8]}"
    settings = live.settings.replace(retention={"task_queue": queue})
    async with maintenance_worker(client, live.parts, settings):
        # Windows not reached yet: nothing of ours is touched.
        await _pass(client, live, queue, RetentionPolicy(finished_days=365, waiting_days=365))
        assert (await live.runtime.status(settled_run)).status is RunStatus.COMPLETED
        assert (await live.runtime.status(waiting_run)).status is RunStatus.WAITING_FOR_APPROVAL
        await asyncio.sleep(1.2)
        report = await _pass(
            client, live, queue, RetentionPolicy(finished_days=SECOND, waiting_days=SECOND)
        )
    assert report.cancelled >= 1 and report.purged >= 2
    for run_id in (settled_run, waiting_run):
        with pytest.raises(RunNotFoundError):
            await live.runtime.status(run_id)
    async with live.client() as sdk:
        for task_id in (settled_task, waiting_task):
            with pytest.raises(TaskNotFoundError):
                await sdk.get_task(GetTaskRequest(id=task_id))
    # The server deletes asynchronously: ~4 s on the tuned dev server.
    await asyncio.gather(*(until_gone(client, r, within=60) for r in (settled_run, waiting_run)))


async def test_a_pass_stops_waiting_for_cancelled_runs_no_worker_can_settle(
    client: Client, live: Live, make_runtime: MakeRuntime
) -> None:
    async with make_runtime(no_faults) as runtime:
        orphan = await runtime.run("support", "Please refund order 1042")
        assert orphan.status is RunStatus.WAITING_FOR_APPROVAL
    # Its worker is gone: the pass's cancel reaches the workflow, which cannot settle.
    queue = f"maint-{uuid.uuid4().hex[:8]}"
    settings = live.settings.replace(retention={"task_queue": queue})
    pass_id = f"retention-{uuid.uuid4().hex[:8]}"
    await asyncio.sleep(1.2)
    async with maintenance_worker(client, live.parts, settings):
        report = await client.execute_workflow(
            WORKFLOW_RETENTION,
            RetentionPolicy(finished_days=365, waiting_days=SECOND),
            id=pass_id,
            task_queue=queue,
            result_type=RetentionReport,
        )
    assert report.cancelled >= 1 and report.purged >= 1
    with pytest.raises(RunNotFoundError):  # purged all the same
        await live.runtime.status(orphan.run_id)
    history = await client.get_workflow_handle(pass_id).fetch_history()
    checks = [
        e
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == ACT_RETENTION_UNSETTLED
    ]
    # Stopped once STALLED_CHECKS checks in a row saw no run settle, not after all of them.
    assert STALLED_CHECKS <= len(checks) < SETTLE_CHECKS


async def test_schedules_apply_is_idempotent(client: Client, settings: Settings) -> None:
    schedule_id = f"retention-{uuid.uuid4().hex[:8]}"
    tuned = settings.replace(retention={"finished_days": 7.0})
    try:
        assert await schedules.apply(client, settings, schedule_id) == "created"
        assert await schedules.apply(client, tuned, schedule_id) == "updated"
        assert await schedules.apply(client, tuned, schedule_id) == "updated"
        desc = await client.get_schedule_handle(schedule_id).describe()
        action = desc.schedule.action
        assert isinstance(action, ScheduleActionStartWorkflow)
        assert action.workflow == WORKFLOW_RETENTION
        assert action.task_queue == settings.retention.task_queue
        policy = await client.data_converter.decode(action.args, [RetentionPolicy])  # type: ignore[arg-type]
        assert policy[0] == RetentionPolicy(finished_days=7.0, waiting_days=14.0)
        assert len([s async for s in await client.list_schedules() if s.id == schedule_id]) == 1
    finally:
        await client.get_schedule_handle(schedule_id).delete()


def test_a_retention_window_of_zero_is_one_error(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match="AGENTRT_RETENTION_WAITING_DAYS must be greater than 0"):
        schedules.retention_policy(settings.replace(retention={"waiting_days": 0}))
    monkeypatch.setenv("AGENTRT_RETENTION_FINISHED_DAYS", "0")
    monkeypatch.setenv("AGENTRT_TEMPORAL_ADDRESS", "127.0.0.1:1")  # never reached
    assert cli.main(["schedules", "apply"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert err == "agentrt: AGENTRT_RETENTION_FINISHED_DAYS must be greater than 0 (got 0.0)"
