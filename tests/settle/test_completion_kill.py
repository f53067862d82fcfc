"""A worker SIGKILLed right after a store step committed: begin (a local activity: its
workflow task runs again on the next worker) and the completion (made by the final model
activity on its answer: the activity is retried once its heartbeat stops, finds the turn
recorded and the run completed). Both steps are idempotent, and the run ends as if each
had run once."""

import asyncio
import json

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.ids import ACT_FENCE_STAMP, ACT_RUN_BEGIN
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from tests.workers._proc import Arm

# The killed worker's workflow task times out (10 s) before another worker takes it.
WITHIN = 60.0


@pytest.mark.timeout(150)
@pytest.mark.parametrize("point", ["begin.after_write", "complete.after_commit"])
async def test_a_local_step_whose_worker_died_after_its_commit_takes_effect_once(
    point: str, arm: Arm, temporal_env: WorkflowEnvironment, runtime: AgentRuntime, runs: RunStore
) -> None:
    faulty = arm(point)
    # start answers once `begun` does: for a kill inside begin, only on the next worker.
    starting = asyncio.create_task(runtime.start("auto", "Please refund order 1042"))
    await faulty.reached()
    faulty.worker.kill()
    faulty.successor()
    run_id = await asyncio.wait_for(starting, WITHIN)
    view = await asyncio.wait_for(runtime.result(run_id), WITHIN)

    assert view.status is RunStatus.COMPLETED
    assert view.answer is not None
    kinds = [e.kind for e in await runtime.events(run_id)]
    assert kinds.count(EventKind.RUN_STARTED) == 1
    assert kinds.count(EventKind.RUN_COMPLETED) == 1 and kinds[-1] is EventKind.RUN_COMPLETED
    assert [m.role for m in runs.transcript(run_id)].count("user") == 1
    # However often begin ran, history holds one marker for it; the completion has none of
    # its own (the model activity made it on the answer). The refund's fence stamp has its
    # own marker.
    history = await temporal_env.client.get_workflow_handle(run_id).fetch_history()
    markers_of = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for e in history.events
        if e.HasField("marker_recorded_event_attributes")
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert sorted(m["activity_type"] for m in markers_of) == [ACT_FENCE_STAMP, ACT_RUN_BEGIN]
    completions = [
        e
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == "run.complete"
    ]
    assert completions == []
