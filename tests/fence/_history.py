"""The fence's steps in a run's history: the write is a scheduled activity, the stamp a
local activity (since the `fence-local-stamp` patch), so a marker the SDK core records."""

import json

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.converter import DataConverter

from agentrt.contracts.ids import ACT_FENCE_STAMP
from agentrt.contracts.run import FenceResult

LOCAL_ACTIVITY_MARKER = "core_local_activity"  # the SDK core's name for the marker


def stamp_markers(events: list[HistoryEvent]) -> list[HistoryEvent]:
    """The local `fence.stamp` markers, in history order."""
    found = []
    for e in events:
        if e.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        attrs = e.marker_recorded_event_attributes
        if attrs.marker_name != LOCAL_ACTIVITY_MARKER:
            continue
        data = json.loads(attrs.details["data"].payloads[0].data)
        if data["activity_type"] == ACT_FENCE_STAMP:
            found.append(e)
    return found


async def stamp_state(converter: DataConverter, marker: HistoryEvent) -> str:
    """What the stamp answered (a FenceState value), from its marker's result."""
    payloads = marker.marker_recorded_event_attributes.details["result"].payloads
    [result] = await converter.decode(payloads, [FenceResult])
    assert isinstance(result, FenceResult)
    return result.state
