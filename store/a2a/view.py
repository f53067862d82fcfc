"""Pure builders of A2A 1.0 ProtoJSON objects (dicts) and the run-status mapping.

The store and the projector speak plain ProtoJSON dicts, so the worker needs no A2A SDK;
the HTTP process parses them into the SDK's protobuf types.
"""

from datetime import datetime
from typing import Any

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.store.runs.answer import keep_text

SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, "TASK_STATE_REJECTED"})
INTERRUPTED = frozenset({INPUT_REQUIRED, "TASK_STATE_AUTH_REQUIRED"})

APPROVAL_NOTE = "Waiting for an operator's approval before going on."
NOT_RETAINABLE_NOTE = "The result could not be kept under this installation's privacy policy."
FAILED_NOTE = "The task failed."
CANCELED_NOTE = "The task was canceled."
RETAINABLE_LEVELS = frozenset({"full", "redacted"})


__all__ = ["keep_text"]  # (defined in store.runs.answer)


def iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def agent_message(message_id: str, task_id: str, context_id: str, text: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "taskId": task_id,
        "contextId": context_id,
        "role": "ROLE_AGENT",
        "parts": [{"text": text}],
    }


def text_artifact(text: str, output: Any = None) -> dict[str, Any]:
    """The answer artifact; a typed answer's object rides beside the text as a data part."""
    parts: list[dict[str, Any]] = [{"text": text}]
    if output is not None:
        parts.append({"data": output, "mediaType": "application/json"})
    return {"artifactId": "answer", "name": "answer", "parts": parts}


def status(state: str, message: dict[str, Any] | None, ts: datetime) -> dict[str, Any]:
    out: dict[str, Any] = {"state": state, "timestamp": iso(ts)}
    if message is not None:
        out["message"] = message
    return out


def status_update(
    task_id: str, context_id: str, status_obj: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    event: dict[str, Any] = {"taskId": task_id, "contextId": context_id, "status": status_obj}
    if metadata:
        event["metadata"] = dict(metadata)
    return {"statusUpdate": event}


def artifact_update(
    task_id: str, context_id: str, artifact: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "taskId": task_id,
        "contextId": context_id,
        "artifact": artifact,
        "lastChunk": True,
    }
    if metadata:
        event["metadata"] = dict(metadata)
    return {"artifactUpdate": event}


def map_run(
    status_value: RunStatus, reason: TerminationReason | None
) -> tuple[str, str | None, dict[str, Any]]:
    """Run status → (task state, fixed status note or None, Task.metadata).

    WAITING_FOR_INPUT and COMPLETED carry content (the question, the answer) that the
    projector reads from the store; their note here is None.
    """
    match status_value:
        case RunStatus.RUNNING:
            return WORKING, None, {}
        case RunStatus.WAITING_FOR_APPROVAL:
            return WORKING, APPROVAL_NOTE, {}
        case RunStatus.WAITING_FOR_INPUT:
            return INPUT_REQUIRED, None, {}
        case RunStatus.COMPLETED:
            return COMPLETED, None, {}
        case RunStatus.CANCELLED:
            return CANCELED, CANCELED_NOTE, {}
        case RunStatus.FAILED:
            if reason is TerminationReason.RESULT_NOT_RETAINABLE:
                return FAILED, NOT_RETAINABLE_NOTE, {"reason": "RESULT_NOT_RETAINABLE"}
            code = (reason.value if reason else "failed").upper()
            return FAILED, FAILED_NOTE, {"reason": code}
        case _:
            return WORKING, None, {}
