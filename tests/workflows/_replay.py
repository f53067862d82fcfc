"""A run's history, replayed on today's workflow code, and the patches it recorded."""

import json
from collections.abc import Iterable

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
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


def patches(events: Iterable[HistoryEvent]) -> list[str]:
    """The ids of the patch markers among a history's events, in order."""
    found = []
    for e in events:
        if e.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        attrs = e.marker_recorded_event_attributes
        if attrs.marker_name == "core_patch":
            found.append(json.loads(attrs.details["patch-data"].payloads[0].data)["id"])
    return found


async def fetch(client: Client, run_id: str) -> WorkflowHistory:
    return await client.get_workflow_handle(run_id).fetch_history()
