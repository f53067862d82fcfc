"""A run's history, replayed on today's workflow code, and what it recorded: the patches,
the markers, the activities it scheduled."""

import json
from collections import Counter
from collections.abc import Iterable

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentrt.core.temporal import data_converter
from agentrt.workers.main import sandbox_runner
from agentrt.workflows.agent_run import AgentRunWorkflow


def replayer() -> Replayer:
    return Replayer(
        workflows=[AgentRunWorkflow],
        data_converter=data_converter(),
        workflow_runner=sandbox_runner(),
    )


async def assert_replays(history: WorkflowHistory) -> None:
    """The history replays on today's workflow code (no nondeterminism)."""
    result = await replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


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
