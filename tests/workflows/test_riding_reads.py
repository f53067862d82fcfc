"""Reads whose steps ride with the next model call (issue 45, workflows/riding.py), through
the workflow: the model call writes them with its turn, a stop before any model call
records them alone, and a model worker of an earlier build (which knows no `pending`)
leaves them to the workflow, which records them itself: no read's step is ever lost."""

import asyncio
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.ids import ACT_MODEL_COMPLETE, ACT_TOOL_RECORD_DEFERRED
from agentrt.contracts.run import ModelRequest, ModelResult
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from tests.workflows._replay import fetch, scheduled
from tests.workflows._waiting import until_status

MakeRuntime = Callable[..., AbstractAsyncContextManager[AgentRuntime]]
PROMPT = "what about my order?"  # lookup_order (a read alone in its round), then the answer


def _name(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__temporal_activity_definition").name)


def _as_earlier_build(built: WorkerResources) -> None:
    """The worker's model activity as an earlier build's: `pending` unknown to it (it
    neither reads nor writes the reads, and says it stored none)."""
    [current] = [a for a in built.activities if _name(a) == ACT_MODEL_COMPLETE]

    @activity.defn(name=ACT_MODEL_COMPLETE)
    async def earlier_build(req: ModelRequest) -> ModelResult:
        result: ModelResult = await current(req.model_copy(update={"pending": []}))
        return result

    built.activities = [earlier_build if a is current else a for a in built.activities]


async def test_a_read_rides_with_the_next_model_call(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    view = await runtime.run("auto", PROMPT)
    assert view.status is RunStatus.COMPLETED
    events = await runtime.events(view.run_id)
    assert [e.kind for e in events] == [EventKind.RUN_STARTED, EventKind.LLM, EventKind.TOOL,
                                        EventKind.LLM, EventKind.RUN_COMPLETED]  # fmt: skip
    assert [e.sequence for e in events] == list(range(len(events)))
    # The read's step and the answer's turn landed in one commit: nothing recorded it alone.
    assert ACT_TOOL_RECORD_DEFERRED not in scheduled(await fetch(client, view.run_id))


async def test_a_model_worker_of_an_earlier_build_leaves_the_reads_to_the_workflow(
    client: Client, make_runtime: MakeRuntime
) -> None:
    async with make_runtime(lambda point: None, alter=_as_earlier_build) as runtime:
        view = await runtime.run("auto", PROMPT)
        events = await runtime.events(view.run_id)
    assert view.status is RunStatus.COMPLETED
    tools = [e for e in events if e.kind is EventKind.TOOL]
    assert len(tools) == 1 and tools[0].payload["tool"] == "lookup_order"
    assert sorted(e.sequence for e in events) == list(range(len(events)))
    assert scheduled(await fetch(client, view.run_id)).count(ACT_TOOL_RECORD_DEFERRED) == 1


class HoldSecond:
    """A fault hook that holds the second activity to reach `point` until released."""

    def __init__(self, point: str) -> None:
        self.point, self.hits = point, 0
        self.reached, self.release = threading.Event(), threading.Event()

    def __call__(self, point: str) -> None:
        if point != self.point:
            return
        self.hits += 1
        if self.hits == 2:
            self.reached.set()
            self.release.wait(timeout=30)


async def test_a_cancel_before_the_model_call_returns_records_the_reads_first(
    make_runtime: MakeRuntime, client: Client
) -> None:
    """The model call the read rides with is in flight when the run is cancelled: its
    result never reaches the workflow, which records the read alone before it settles."""
    hold = HoldSecond("model.before_provider")
    async with make_runtime(hold) as runtime:
        run_id = await runtime.start("auto", PROMPT)
        assert await asyncio.to_thread(hold.reached.wait, 30), "never reached the hold"
        await runtime.cancel(run_id, by="ops")
        try:
            done = await until_status(runtime, run_id, RunStatus.CANCELLED)
        finally:
            hold.release.set()
        events = sorted(await runtime.events(run_id), key=lambda e: e.sequence)
    assert done.status is RunStatus.CANCELLED
    tools = [e for e in events if e.kind is EventKind.TOOL]
    assert len(tools) == 1 and tools[0].payload["tool"] == "lookup_order"
    assert tools[0].sequence < events[-1].sequence and events[-1].kind is EventKind.CANCEL
    assert scheduled(await fetch(client, run_id)).count(ACT_TOOL_RECORD_DEFERRED) == 1
