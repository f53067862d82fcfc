"""A remote task as its send streams it (A2A `message/stream`, SSE), for a call whose
activity has a live channel: the task the remote made, its status updates and artifact
updates applied to it as they come, and the text of each (a status message, an artifact's
parts) handed to `emit`, the call's live output (activities/live.py). A card that does not
say it streams is answered by the one JSON response: the same task, nothing to emit. One
request either way; the task, once settled, is the call's result as a polled one is."""

import json
from collections.abc import AsyncIterator, Iterable

from a2a.types import Artifact, Message, Part, StreamResponse, Task, TaskState
from google.protobuf.json_format import MessageToDict

from agentrt.activities.ports import Emit


def parts_text(parts: Iterable[Part]) -> str:
    """Text parts as they are, data parts as JSON, one a line."""
    out = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            out.append(part.text)
        elif kind == "data":
            out.append(json.dumps(MessageToDict(part.data)))
    return "\n".join(out)


def answered(message: Message) -> Task:
    """A direct answer (a message, no task to follow) as a completed task."""
    done = Task(id="", context_id=message.context_id)
    done.status.state = TaskState.TASK_STATE_COMPLETED
    done.status.message.CopyFrom(message)
    return done


def _merge(task: Task, artifact: Artifact, append: bool) -> None:
    """An artifact update applied: its parts appended to the artifact of its id when
    `append`, else the artifact set (replaced, or added)."""
    for held in task.artifacts:
        if held.artifact_id == artifact.artifact_id:
            if append:
                held.parts.extend(artifact.parts)
            else:
                held.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)


async def followed(responses: AsyncIterator[StreamResponse], emit: Emit | None) -> Task | None:
    """The task as the responses tell it, once they end (None: neither a task nor a
    message came); each piece of text emitted as it comes."""
    task: Task | None = None
    async for response in responses:
        kind = response.WhichOneof("payload")
        text = ""
        if kind == "message":
            return answered(response.message)
        if kind == "task":
            task = Task()
            task.CopyFrom(response.task)
            text = parts_text(task.status.message.parts)
        elif task is not None and kind == "status_update":
            task.status.CopyFrom(response.status_update.status)
            text = parts_text(task.status.message.parts)
        elif task is not None and kind == "artifact_update":
            update = response.artifact_update
            _merge(task, update.artifact, update.append)
            text = parts_text(update.artifact.parts)
        if text and emit is not None:
            await emit(text + "\n")
    return task
