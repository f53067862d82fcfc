"""Our stored ProtoJSON ↔ the SDK's protobuf types."""

from typing import Any

from a2a.types import (
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import MessageToDict, ParseDict

from agentrt.store.a2a.tasks import TaskRecord
from agentrt.store.a2a.view import status

Event = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


def task_proto(
    rec: TaskRecord, history_length: int | None = None, *, artifacts: bool = True
) -> Task:
    """The task view. history_length: None = all, 0 = none, n = the n most recent."""
    data: dict[str, Any] = {
        "id": rec.id,
        "contextId": rec.context_id,
        "status": status(rec.state, rec.status_message, rec.status_at),
    }
    if artifacts and rec.artifacts:
        data["artifacts"] = rec.artifacts
    history = rec.history
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    if history:
        data["history"] = history
    if rec.metadata:
        data["metadata"] = rec.metadata
    return ParseDict(data, Task(), ignore_unknown_fields=True)


def task_from_dict(data: dict[str, Any]) -> Task:
    return ParseDict(data, Task(), ignore_unknown_fields=True)


def event_proto(payload: dict[str, Any]) -> Event:
    """A journal payload (StreamResponse ProtoJSON) as the event it carries."""
    response = ParseDict(payload, StreamResponse(), ignore_unknown_fields=True)
    which = response.WhichOneof("payload")
    if which == "status_update":
        return response.status_update
    if which == "artifact_update":
        return response.artifact_update
    return response.task


def message_dict(message: Message) -> dict[str, Any]:
    return dict(MessageToDict(message, preserving_proto_field_name=False))


def message_text(message: Message) -> str:
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text")
