"""Issue 44, "done means": a schedule fires three times under a worker SIGKILL with exactly
three runs. Each fire's worker process is SIGKILLed while the fire is in flight (the first
inside its run's model call, the next two as soon as Temporal recorded the fire), a new
worker takes over, and the store holds exactly three runs of the schedule, one per fire,
each with the run id its fire's time derives."""

import pytest
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import UnknownProfileError
from agentrt.contracts.schedules import fire_run_id, initiator_of
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.scheduling import RunSchedules
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from tests.starter._schedules import fire_ids, fired, run_ended, schedule_name
from tests.starter.test_scheduling import request
from tests.workers._proc import Arm, WorkerPool, WorkerProcess
from tests.workflows._waiting import until


async def registered(runtime: AgentRuntime, profile: str, worker: WorkerProcess) -> None:
    """Until a live worker has registered `profile` (a schedule of it is refused before)."""

    async def startable() -> bool:
        try:
            await runtime.startable(profile)
        except UnknownProfileError:
            assert worker.alive(), worker.log_tail()
            return False
        return True

    await until(startable, f"profile {profile} registered", 60)


async def fire_closed(client: Client, name: str, count: int) -> str:
    """The `count`th fire's workflow id, once that fire has ended (so the next trigger is
    not skipped by the overlap policy while it waits on its run)."""
    fire_id = (await fire_ids(client, name))[count - 1]
    await client.get_workflow_handle(fire_id).result()
    return fire_id


@pytest.mark.timeout(120)
async def test_three_fires_under_worker_sigkills_make_exactly_three_runs(
    arm: Arm, pool: WorkerPool, runtime: AgentRuntime, client: Client, runs: RunStore
) -> None:
    faulty = arm("model.before_provider")
    await registered(runtime, "support", faulty.worker)
    schedules = RunSchedules(runtime)
    name = schedule_name("kill")
    await schedules.create(request(name, paused=True), created_by="ops")
    try:
        await schedules.trigger(name)
        await faulty.reached()  # the first run is inside its model call
        faulty.worker.kill()
        worker = faulty.successor()
        await run_ended(runtime, (await fired(schedules.get, name, 1))[-1])
        fires = [await fire_closed(client, name, 1)]
        for count in (2, 3):
            await schedules.trigger(name)
            await fired(schedules.get, name, count)
            worker.kill()  # the fire is recorded and in flight: its worker dies
            worker = pool.spawn(faulty.unarmed)
            fires.append(await fire_closed(client, name, count))
        run_ids = await fired(schedules.get, name, 3)
        ended = [await run_ended(runtime, r) for r in run_ids]
        desc = await client.get_schedule_handle(name).describe()
    finally:
        await schedules.delete(name)
    assert [r.status for r in ended] == [RunStatus.COMPLETED] * 3
    assert run_ids == [fire_run_id(name, a.scheduled_at) for a in desc.info.recent_actions]
    assert len(set(run_ids)) == 3 and len(set(fires)) == 3
    stored = RunQuery(runs.ctx).page(visible_to=None, initiator=initiator_of(name, "ops"))
    assert sorted(r.run_id for r in stored.runs) == sorted(run_ids)
    for fire_id in fires:
        result = await client.get_workflow_handle(fire_id).result()
        assert result["attached"] is False and result["status"] == "COMPLETED"
