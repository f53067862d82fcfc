"""Reading a workflow's event history: its size and the activities it ran, with timestamps."""

from collections import Counter
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory


@dataclass(frozen=True)
class ActivitySpan:
    """One activity as the server recorded it (nanoseconds since the epoch)."""

    activity_type: str
    scheduled_ns: int
    completed_ns: int
    started_ns: int  # the worker's poll took the task (its ActivityTaskStarted event)
    scheduled_id: int  # event ids: what happened between two activities, in order
    completed_id: int

    @property
    def ms(self) -> float:
        return (self.completed_ns - self.scheduled_ns) / 1e6

    @property
    def queued_ms(self) -> float:
        """Scheduled to taken by a worker: the server's dispatch, none of the activity's work."""
        return (self.started_ns - self.scheduled_ns) / 1e6


@dataclass(frozen=True)
class HistoryFacts:
    events: int
    proto_bytes: int  # sum of the events' serialized sizes: what the server stores
    json_chars: int  # len(history.to_json()), for comparison with other measurements
    spans: list[ActivitySpan]
    opened_ns: int  # the workflow's first event
    closed_ns: int  # its last event
    task_ids: list[int]  # the event ids of its completed workflow tasks

    def activity_counts(self) -> Counter[str]:
        return Counter(s.activity_type for s in self.spans)


def _ns(event: HistoryEvent) -> int:
    return int(event.event_time.ToNanoseconds())


def activity_spans(events: list[HistoryEvent]) -> list[ActivitySpan]:
    """Completed activities in scheduling order."""
    scheduled: dict[int, HistoryEvent] = {}
    started: dict[int, int] = {}  # scheduled event id -> started time
    spans: list[ActivitySpan] = []
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = event
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = _ns(event)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            origin = scheduled[event.activity_task_completed_event_attributes.scheduled_event_id]
            name = origin.activity_task_scheduled_event_attributes.activity_type.name
            begun = started.get(origin.event_id, _ns(origin))
            spans.append(
                ActivitySpan(name, _ns(origin), _ns(event), begun, origin.event_id, event.event_id)
            )
    spans.sort(key=lambda s: s.scheduled_ns)
    return spans


def facts(history: WorkflowHistory) -> HistoryFacts:
    events = list(history.events)
    return HistoryFacts(
        events=len(events),
        proto_bytes=sum(e.ByteSize() for e in events),
        json_chars=len(history.to_json()),
        spans=activity_spans(events),
        opened_ns=_ns(events[0]),
        closed_ns=_ns(events[-1]),
        task_ids=[
            e.event_id
            for e in events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        ],
    )


async def fetch_facts(client: Client, workflow_id: str) -> HistoryFacts:
    return facts(await client.get_workflow_handle(workflow_id).fetch_history())
