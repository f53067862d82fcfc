"""A schedule's fire (workflows/scheduled.py), replayed on today's code: recorded fires in
tests/histories/scheduled/ (`next-`: recorded on the branch that added the fire), and
fresh ones (a fire that started its run, and one reset that attached to it). A change to
the commands a fire emits fails here and must go behind `workflow.patched()`.
AGENTRT_RECORD_HISTORIES=1 writes the missing recorded files, as test_replay.py does."""

import os
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt.starter.facade import AgentRuntime
from agentrt.starter.scheduling import RunSchedules
from agentrt.workflows.scheduled import ScheduledFireWorkflow
from tests.starter._schedules import fire_ids, fired, run_ended, schedule_name
from tests.starter.test_scheduling import request, reset_to_first_task, schedules  # noqa: F401
from tests.workflows._replay import assert_replays, read_recorded, record

FIRES = Path(__file__).resolve().parents[1] / "histories" / "scheduled"


def _recorded() -> list[Path]:
    return sorted(FIRES.glob("*.json"))


@pytest.mark.parametrize("path", _recorded(), ids=lambda p: p.stem)
async def test_a_recorded_fire_replays(path: Path) -> None:
    await assert_replays(await read_recorded(path), ScheduledFireWorkflow)


def test_there_are_recorded_fires() -> None:
    assert {p.stem for p in _recorded()} >= {"next-fire_started", "next-fire_attached"}


async def test_fresh_fires_replay_and_can_be_recorded(
    schedules: RunSchedules,  # noqa: F811 (the fixture of test_scheduling.py)
    runtime: AgentRuntime,
    client: Client,
) -> None:
    name = schedule_name("replay")
    await schedules.create(request(name, paused=True), created_by="alice")
    try:
        await schedules.trigger(name)
        await run_ended(runtime, (await fired(schedules.get, name, 1))[0])
        [fire_id] = await fire_ids(client, name)
        started = await client.get_workflow_handle(fire_id).fetch_history()
        again = await reset_to_first_task(client, fire_id)
        await client.get_workflow_handle(fire_id, run_id=again).result()
        attached = await client.get_workflow_handle(fire_id, run_id=again).fetch_history()
    finally:
        await schedules.delete(name)
    recording = bool(os.environ.get("AGENTRT_RECORD_HISTORIES", ""))
    for path_name, history in (("fire_started", started), ("fire_attached", attached)):
        await assert_replays(history, ScheduledFireWorkflow, what=path_name)
        if recording:
            record(FIRES / f"next-{path_name}.json", fire_id, history)
