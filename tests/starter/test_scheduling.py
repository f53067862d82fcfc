"""Schedules of runs (starter/scheduling.py, `agentrt schedules ...`) against the suite's
real dev server, database and an in-process worker: create, list, show, trigger (one run
per fire, its id derived from the schedule and the fire time, its initiator the schedule
and its creator), pause, resume, backfill, delete, and bad input that creates nothing."""

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    InvalidRequestError,
    ScheduleExistsError,
    ScheduleNotFoundError,
    UnknownProfileError,
)
from agentrt.contracts.ids import SCHEDULE_RETENTION
from agentrt.contracts.schedules import ScheduleRequest, fire_run_id, initiator_of
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.scheduling import RunSchedules
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from tests.starter._schedules import (
    LOOKUP,
    absent,
    fire_ids,
    fired,
    listed,
    run_ended,
    run_exists,
    schedule_name,
)
from tests.starter.test_cli import agentrt, assert_clean_error, cli_env  # noqa: F401
from tests.workflows._waiting import until


@pytest.fixture
def schedules(runtime: AgentRuntime, worker: Worker) -> RunSchedules:
    """The runtime's schedules, with the suite's worker serving their runs."""
    return RunSchedules(runtime)


def request(name: str, **fields: object) -> ScheduleRequest:
    given: dict[str, object] = {"name": name, "profile": "support", "prompt": LOOKUP}
    given.update(fields)
    if "cron" not in given and "every" not in given:
        given["every"] = "1h"
    return ScheduleRequest.checked(10_000, given)


async def test_a_trigger_fires_one_run_named_by_the_schedule_and_its_creator(
    schedules: RunSchedules, runtime: AgentRuntime, client: Client
) -> None:
    name = schedule_name()
    view = await schedules.create(request(name, paused=True), created_by="alice")
    assert (view.profile, view.spec, view.overlap) == ("support", "every 1h", "skip")
    assert view.paused and view.created_by == "alice" and view.recent_runs == []
    try:
        await schedules.trigger(name)  # a paused schedule fires when triggered
        [run_id] = await fired(schedules.get, name, 1)
        run = await run_ended(runtime, run_id)
        assert run.status is RunStatus.COMPLETED
        assert run.initiator == f"schedule:{name} by alice"
        # The run id is the fire's: derived from the schedule and its scheduled time.
        desc = await client.get_schedule_handle(name).describe()
        [action] = desc.info.recent_actions
        assert run_id == fire_run_id(name, action.scheduled_at)
        fire = client.get_workflow_handle((await fire_ids(client, name))[0])
        assert (await fire.result())["run_id"] == run_id
        assert (await listed(schedules.list, name)).created_by == "alice"
    finally:
        await schedules.delete(name)
    assert await absent(client, name)


async def reset_to_first_task(client: Client, workflow_id: str) -> str:
    """Reset the workflow so its first task (the fire's start of its run) runs again."""
    handle = client.get_workflow_handle(workflow_id)
    events = (await handle.fetch_history()).events
    done = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    first = next(e.event_id for e in events if e.event_type == done)
    desc = await handle.describe()
    reply = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id, run_id=desc.run_id),
            reason="test: a fire run again",
            workflow_task_finish_event_id=first,
            request_id=str(uuid.uuid4()),
        )
    )
    return reply.run_id


async def test_a_fire_run_again_attaches_to_its_run_and_starts_no_second(
    schedules: RunSchedules, runtime: AgentRuntime, client: Client, runs: RunStore
) -> None:
    """A retried fire (here: its workflow reset to the task that started its run, the
    strongest retry there is) names the same run id, finds the run and starts none."""
    name = schedule_name("reset")
    await schedules.create(request(name, paused=True), created_by="alice")
    try:
        await schedules.trigger(name)
        [run_id] = await fired(schedules.get, name, 1)
        await run_ended(runtime, run_id)
        [fire_id] = await fire_ids(client, name)
        assert (await client.get_workflow_handle(fire_id).result())["attached"] is False
        again = await reset_to_first_task(client, fire_id)
        result = await client.get_workflow_handle(fire_id, run_id=again).result()
        assert result == {"run_id": run_id, "attached": True, "status": None}
    finally:
        await schedules.delete(name)
    stored = RunQuery(runs.ctx).page(visible_to=None, initiator=initiator_of(name, "alice"))
    assert [r.run_id for r in stored.runs] == [run_id]


async def test_pause_resume_backfill_and_delete(
    schedules: RunSchedules, runtime: AgentRuntime, client: Client
) -> None:
    name = schedule_name()
    await schedules.create(request(name, cron="0 * * * *", overlap="allow_all"), created_by="bo")
    try:
        await schedules.pause(name, by="bo")
        view = await schedules.get(name)
        assert view.paused and view.note == "paused by bo"
        await schedules.resume(name, by="cy")
        view = await schedules.get(name)
        assert not view.paused and view.next_fires
        # Two hourly fires in the past: two runs, each its own.
        hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        await schedules.backfill(name, hour - timedelta(hours=2), hour - timedelta(minutes=1))
        runs = await fired(schedules.get, name, 2)
        assert runs == [
            fire_run_id(name, hour - timedelta(hours=2)),
            fire_run_id(name, hour - timedelta(hours=1)),
        ]
        ended = await asyncio.gather(*(run_ended(runtime, r) for r in runs))
        assert {r.status for r in ended} == {RunStatus.COMPLETED}
    finally:
        await schedules.delete(name)
    with pytest.raises(ScheduleNotFoundError):
        await schedules.get(name)
    with pytest.raises(ScheduleNotFoundError):
        await schedules.trigger(name)


async def test_bad_input_is_a_typed_error_and_creates_nothing(
    schedules: RunSchedules, client: Client
) -> None:
    name = schedule_name()
    with pytest.raises(InvalidRequestError, match="Minute is not in range"):
        await schedules.create(request(name, cron="61 * * * *"), created_by="alice")
    with pytest.raises(InvalidRequestError, match="5-7 fields"):
        await schedules.create(request(name, cron="not a cron"), created_by="alice")
    with pytest.raises(UnknownProfileError, match="nobody"):
        await schedules.create(request(name, profile="nobody"), created_by="alice")
    assert await absent(client, name)
    for fields, wanted in (
        ({"every": "5q"}, "not an interval"),
        ({"every": "0s"}, "between 1s and 366d"),
        ({"cron": "* * * * *", "every": "1m"}, "exactly one of cron and every"),
        ({"name": "agentrt-mine"}, "may not begin with"),
        ({"name": "has space"}, "name"),
        ({"overlap": "sometimes"}, "overlap"),
        ({"prompt": " "}, "prompt is empty"),
        ({"colour": "red"}, "unknown field colour"),
    ):
        with pytest.raises(InvalidRequestError, match=wanted):
            request(str(fields.pop("name", name)), **fields)
    await schedules.create(request(name), created_by="alice")
    try:
        with pytest.raises(ScheduleExistsError):
            await schedules.create(request(name, prompt="another"), created_by="eve")
        assert (await schedules.get(name)).created_by == "alice"  # unchanged
    finally:
        await schedules.delete(name)


async def test_the_retention_schedule_is_not_a_schedule_of_runs(
    runtime: AgentRuntime,
) -> None:
    schedules = RunSchedules(runtime)
    with pytest.raises(ScheduleNotFoundError):
        await schedules.delete(SCHEDULE_RETENTION)


@pytest.mark.usefixtures("cli_env", "worker")
async def test_the_cli_creates_lists_triggers_pauses_resumes_and_deletes(
    capsys: pytest.CaptureFixture[str], runtime: AgentRuntime
) -> None:
    name = schedule_name("cli")
    code, out, err = await agentrt(
        capsys, "schedules", "create", name, "support", LOOKUP, "--every", "1h",
        "--paused", "--initiator", "dana",
    )  # fmt: skip
    assert code == 0, err
    assert name in out and "every 1h" in out and "paused" in out and "by dana" in out
    try:

        async def listed() -> bool:  # the list reads Temporal's visibility
            return name in (await agentrt(capsys, "schedules", "list"))[1]

        await until(listed, f"schedule {name} listed by the CLI")
        assert (await agentrt(capsys, "schedules", "trigger", name))[0] == 0
        [run_id] = await fired(RunSchedules(runtime).get, name, 1)
        assert (await run_ended(runtime, run_id)).initiator == f"schedule:{name} by dana"
        code, out, _ = await agentrt(capsys, "schedules", "show", name, "--json")
        assert json.loads(out)["recent_runs"] == [run_id]
        assert (await agentrt(capsys, "schedules", "resume", name))[0] == 0
        code, out, _ = await agentrt(capsys, "schedules", "show", name)
        assert "active" in out
        assert (await agentrt(capsys, "schedules", "pause", name, "--by", "dana"))[0] == 0
        code, out, _ = await agentrt(capsys, "schedules", "show", name, "--json")
        assert json.loads(out)["paused"] is True
    finally:
        code, out, _ = await agentrt(capsys, "schedules", "delete", name)
    assert code == 0 and "deleted" in out
    code, _, err = await agentrt(capsys, "schedules", "trigger", name)
    assert_clean_error(code, err, "no schedule of runs")
    code, _, err = await agentrt(
        capsys, "schedules", "create", name, "support", LOOKUP, "--cron", "61 * * * *"
    )
    assert_clean_error(code, err, "Minute is not in range")
    code, _, err = await agentrt(
        capsys, "schedules", "create", name, "nobody", LOOKUP, "--every", "5m"
    )
    assert_clean_error(code, err, "unknown agent profile 'nobody'")
    code, _, err = await agentrt(capsys, "schedules", "show", name)
    assert_clean_error(code, err, "no schedule of runs")
    code, _, err = await agentrt(
        capsys, "schedules", "backfill", name, "--start", "yesterday", "--end", "2026-01-01T00:00Z"
    )
    assert_clean_error(code, err, "--start 'yesterday' is not an ISO 8601 time")
    code, _, err = await agentrt(
        capsys, "schedules", "backfill", name, "--start", "2026-01-01", "--end", "2026-01-02Z"
    )
    assert_clean_error(code, err, "names no time zone")


async def skipped(client: Client, name: str, count: int, within: float = 30) -> None:
    """Until Temporal counts `count` fires of the schedule skipped for overlap."""

    async def counted() -> bool:
        desc = await client.get_schedule_handle(name).describe()
        return desc.info.num_actions_skipped_overlap >= count

    await until(counted, f"{count} fires of {name} skipped", within)


async def test_overlap_skip_by_default_starts_no_run_while_the_last_waits(
    schedules: RunSchedules, runtime: AgentRuntime, client: Client, runs: RunStore
) -> None:
    """The fire waits for its run, so a fire due while the run waits for approval is
    skipped (the default policy): no second run until the first ends."""
    name = schedule_name("overlap")
    await schedules.create(
        request(name, prompt="Please refund order 1042", paused=True), created_by="alice"
    )
    try:
        await schedules.trigger(name)
        [run_id] = await fired(schedules.get, name, 1)
        waiting = await runtime.wait(run_id) if await run_exists(client, run_id) else None
        assert waiting is not None and waiting.status is RunStatus.WAITING_FOR_APPROVAL
        await schedules.trigger(name)
        await skipped(client, name, 1)
        assert (await schedules.get(name)).recent_runs == [run_id]
        await runtime.cancel(run_id, by="alice", reason="test over")
        [fire_id] = await fire_ids(client, name)
        result = await client.get_workflow_handle(fire_id).result()
        assert result["status"] == "CANCELLED"
    finally:
        await schedules.delete(name)
    stored = RunQuery(runs.ctx).page(visible_to=None, initiator=initiator_of(name, "alice"))
    assert [r.run_id for r in stored.runs] == [run_id]


async def test_an_interval_fires_on_its_own(schedules: RunSchedules, runtime: AgentRuntime) -> None:
    name = schedule_name("every")
    await schedules.create(request(name, every="2s"), created_by="alice")
    try:
        run_ids = await fired(schedules.get, name, 2)
    finally:
        await schedules.delete(name)
    ended = [await run_ended(runtime, r) for r in run_ids]
    assert [r.status for r in ended] == [RunStatus.COMPLETED] * 2
    assert len(set(run_ids)) == 2
