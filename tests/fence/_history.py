"""The fence's steps in a run's history: the write is a scheduled activity, the stamp a
local activity (since the `fence-local-stamp` patch), so a marker the SDK core records."""

import json

from temporalio.api.history.v1 import HistoryEvent
from temporalio.converter import DataConverter

from agentrt.contracts.ids import ACT_FENCE_STAMP
from agentrt.contracts.run import FenceResult
from tests.workflows._replay import markers

LOCAL_ACTIVITY_MARKER = "core_local_activity"  # the SDK core's name for the marker


def stamp_markers(events: list[HistoryEvent]) -> list[HistoryEvent]:
    """The local `fence.stamp` markers, in history order."""
    local = markers(events, LOCAL_ACTIVITY_MARKER)
    return [e for e in local if _activity_type(e) == ACT_FENCE_STAMP]


def _activity_type(marker: HistoryEvent) -> str:
    data = json.loads(marker.marker_recorded_event_attributes.details["data"].payloads[0].data)
    return str(data["activity_type"])


async def stamp_state(converter: DataConverter, marker: HistoryEvent) -> str:
    """What the stamp answered (a FenceState value), from its marker's result."""
    payloads = marker.marker_recorded_event_attributes.details["result"].payloads
    [result] = await converter.decode(payloads, [FenceResult])
    assert isinstance(result, FenceResult)
    return result.state
