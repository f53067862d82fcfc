"""A run's history, replayed on today's workflow code, and what it recorded: the patches,
the markers, the activities it scheduled."""

import asyncio
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentrt.core.temporal import data_converter
from agentrt.workers.main import sandbox_runner
from agentrt.workflows.agent_run import AgentRunWorkflow


def replayer(*workflows: type[Any]) -> Replayer:
    """A replayer of `workflows` (the agent run's workflow unless named) on the worker's
    converter and sandbox."""
    return Replayer(
        workflows=list(workflows or [AgentRunWorkflow]),
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )


async def assert_replays(history: WorkflowHistory, *workflows: type[Any], what: str = "") -> None:
    """The history replays on today's code of `workflows` (no nondeterminism)."""
    result = await replayer(*workflows).replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, (what, result.replay_failure)


async def read_recorded(path: Path) -> WorkflowHistory:
    """A history recorded by `record` (tests/histories/README.md)."""
    data = json.loads(await asyncio.to_thread(path.read_text))
    return WorkflowHistory.from_json(data["workflow_id"], data["history"])


def record(path: Path, workflow_id: str, history: WorkflowHistory) -> None:
    """Write `history` to `path`, unless a recording is there: recordings stay, they are what
    shipped code wrote and must keep replaying."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {"workflow_id": workflow_id, "history": json.loads(history.to_json())}
        path.write_text(json.dumps(body, indent=1))


def markers(events: Iterable[HistoryEvent], name: str) -> list[HistoryEvent]:
    """The marker events named `name` (the SDK core's: `core_patch`, `core_local_activity`)."""
    return [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == name
    ]


def patches(events: Iterable[HistoryEvent]) -> list[str]:
    """The ids of the patch markers among a history's events, in order."""
    return [
        json.loads(e.marker_recorded_event_attributes.details["patch-data"].payloads[0].data)["id"]
        for e in markers(events, "core_patch")
    ]


def scheduled(history: WorkflowHistory | History) -> list[str]:
    """The activity types the history scheduled, in order."""
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def most_scheduled_at_once(history: WorkflowHistory | History) -> int:
    """The most activities one workflow task scheduled: above one, calls ran side by side
    (a turn run as a group: workflows/_group.py); one, the loop ran them one at a time."""
    counts = Counter(
        e.activity_task_scheduled_event_attributes.workflow_task_completed_event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    )
    return max(counts.values(), default=0)


async def fetch(client: Client, run_id: str) -> WorkflowHistory:
    return await client.get_workflow_handle(run_id).fetch_history()
