"""The model activity completes the run on its answer: one guarded completion, no
completion step at the run's end; a cancel that loses the race to the answer leaves the run
completed, in the store and in Temporal alike. (A model worker that predates the answer
path served runs before 0.3.0, outside the support window: pinned deployments never pair
it with this workflow.)"""

import asyncio
import threading

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.worker import Worker

from agentrt.contracts.approval import CancelRequest
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.ids import SIGNAL_CANCEL
from agentrt.contracts.run import ModelResult, RunResult
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from tests.workflows._waiting import CANCEL_REQUESTED, taken_after, until_history
from tests.workflows.test_failures import MakeRuntime

PROMPT = "what about my order?"
WITHIN = 60.0


async def _history(client: Client, run_id: str) -> list:  # type: ignore[type-arg]
    return list((await client.get_workflow_handle(run_id).fetch_history()).events)


def _local_markers(events: list) -> int:  # type: ignore[type-arg]
    return sum(
        1
        for e in events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    )


def _scheduled(events: list, name: str) -> list:  # type: ignore[type-arg]
    return [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == name
    ]


def _last_turn(events: list) -> ModelResult:  # type: ignore[type-arg]
    model_ids = {e.event_id for e in _scheduled(events, "model.complete")}
    done = [
        e.activity_task_completed_event_attributes
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        and e.activity_task_completed_event_attributes.scheduled_event_id in model_ids
    ]
    payload = done[-1].result.payloads[0]
    turn = data_converter().payload_converter.from_payload(payload, ModelResult)
    assert isinstance(turn, ModelResult)
    return turn


async def test_the_answer_completes_the_run_without_a_step_of_its_own(
    client: Client, runtime: AgentRuntime, worker: Worker, runs: RunStore
) -> None:
    view = await asyncio.wait_for(runtime.run("auto", PROMPT), WITHIN)
    assert view.status is RunStatus.COMPLETED and view.answer
    assert view.termination_reason is TerminationReason.ANSWERED
    events = await _history(client, view.run_id)
    assert _local_markers(events) == 1  # begin only
    assert _scheduled(events, "run.complete") == []
    settled = _last_turn(events).settled
    assert settled is not None and settled.applied and settled.status is RunStatus.COMPLETED
    # The same completion as the workflow's: the event after the answer, its totals.
    stored = await runtime.events(view.run_id)
    answer, done = stored[-2], stored[-1]
    assert (answer.kind, done.kind) == (EventKind.LLM, EventKind.RUN_COMPLETED)
    assert done.sequence == answer.sequence + 1
    assert done.payload["iterations"] == view.iterations == answer.round
    assert done.payload["prompt_tokens"] == view.prompt_tokens > 0
    result = await client.get_workflow_handle(view.run_id, result_type=RunResult).result()
    assert result.status is RunStatus.COMPLETED
    assert result.usage.prompt_tokens == view.prompt_tokens


class HoldAfterSettle:
    """Holds the model activity right after it completed the run, until released."""

    def __init__(self) -> None:
        self.reached, self.release = threading.Event(), threading.Event()

    def __call__(self, point: str) -> None:
        if point == "model.after_settle":
            self.reached.set()
            self.release.wait(timeout=WITHIN)


async def test_a_cancel_that_loses_the_race_to_the_answer_leaves_the_run_completed(
    client: Client, make_runtime: MakeRuntime
) -> None:
    hold = HoldAfterSettle()
    async with make_runtime(hold) as runtime:
        run_id = await runtime.start("auto", PROMPT)
        assert await asyncio.to_thread(hold.reached.wait, WITHIN)
        # The completion is committed; a client that read the run just before sends the
        # cancel now (runtime.cancel itself would see COMPLETED and send nothing).
        handle = client.get_workflow_handle(run_id, result_type=RunResult)
        await handle.signal(SIGNAL_CANCEL, CancelRequest(by="late-operator", reason="too late"))
        await handle.cancel()
        # The workflow takes the cancel before the result lands.
        await until_history(client, run_id, taken_after(CANCEL_REQUESTED), "the cancel taken")
        hold.release.set()
        result = await asyncio.wait_for(handle.result(), WITHIN)
        view = await runtime.status(run_id)
        stored = await runtime.events(run_id)
    assert result.status is RunStatus.COMPLETED
    assert (await handle.describe()).status is WorkflowExecutionStatus.COMPLETED
    assert view.status is RunStatus.COMPLETED and view.answer
    kinds = [e.kind for e in stored]
    assert kinds[-1] is EventKind.RUN_COMPLETED and EventKind.CANCEL not in kinds
