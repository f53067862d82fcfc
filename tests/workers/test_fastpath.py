"""The fast paths (workers/fastpath.py) change how a worker does its work, never what it
does: the same run on a worker with them on and on one with them off leaves the same rows,
schedules the same commands, and each history replays on either worker's runner."""

import json
import re
import uuid
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentrt.activities._loop_pool import LoopPool
from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import make_worker, sandbox_runner
from agentrt.workers.runner import ContextFreeRunner
from agentrt.workflows.agent_run import AgentRunWorkflow
from tests._built import built
from tests.workflows._replay import fetch

# What a command event says, beside its type: the activity it schedules, the marker it
# records. Timestamps, ids and task bookkeeping vary from run to run on either path.
_COMMANDS = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: lambda e: (
        e.activity_task_scheduled_event_attributes.activity_type.name
    ),
    EventType.EVENT_TYPE_MARKER_RECORDED: lambda e: e.marker_recorded_event_attributes.marker_name,
    EventType.EVENT_TYPE_TIMER_STARTED: lambda e: "timer",
    EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: lambda e: "upsert",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: lambda e: "completed",
}


def _commands(history: WorkflowHistory) -> list[str]:
    return [_COMMANDS[e.event_type](e) for e in history.events if e.event_type in _COMMANDS]


async def _refund(client: Client, settings: Settings, fast: bool) -> dict[str, Any]:
    """One refund run (a read, then a fenced write) on a worker with the fast paths `fast`:
    its rows, as the run's id-free JSON, and its history."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    chosen = settings.replace(temporal={"task_queue": queue}, worker={"fast_paths": fast})
    with built(chosen) as parts:
        assert isinstance(parts.store_executor, LoopPool) is fast
        runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
        async with make_worker(client, parts, chosen):
            view = await runtime.run("auto", "Please refund order 1042")
        assert view.status is RunStatus.COMPLETED
        run_id = view.run_id
        events = [
            {"sequence": e.sequence, "kind": e.kind.value, "round": e.round, "payload": e.payload}
            for e in await runtime.events(run_id)
        ]
        transcript = [m.model_dump() for m in RunStore(parts.ctx).transcript(run_id)]
        ledger = DemoWorld(parts.ctx).ledger_count(run_id=run_id)
    kept = {"answer": view.answer, "outcome": view.outcome, "iterations": view.iterations,
            "tokens": (view.prompt_tokens, view.completion_tokens)}  # fmt: skip
    rows = json.dumps([kept, events, transcript, ledger], default=str).replace(run_id, "RUN")
    # The ledger row's own id, which the refund's result names, is the database's next one.
    rows = re.sub(r"Refund #\d+ ", "Refund #N ", rows)
    return {"rows": json.loads(rows), "history": await fetch(client, run_id)}


async def test_both_paths_give_the_same_rows_histories_and_replays(
    client: Client, settings: Settings
) -> None:
    fast, stock = await _refund(client, settings, True), await _refund(client, settings, False)
    assert fast["rows"] == stock["rows"]
    assert fast["rows"][3] == 1  # the refund's one ledger row, on either path
    assert _commands(fast["history"]) == _commands(stock["history"])
    assert "completed" in _commands(fast["history"])
    for on in (True, False):
        runner = sandbox_runner(data_converter(), fast=on)
        assert isinstance(runner, ContextFreeRunner) is on
        replayer = Replayer(
            workflows=[AgentRunWorkflow], data_converter=data_converter(), workflow_runner=runner
        )
        for run in (fast, stock):
            result = await replayer.replay_workflow(run["history"], raise_on_replay_failure=False)
            assert result.replay_failure is None, result.replay_failure
