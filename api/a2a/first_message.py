"""A task's first message and its resends: what a first message asked, as a digest, and
the check that a resend (same caller, same messageId) asks the same. A client retrying
after a lost answer gets the task its first send made; a message that reuses the id to ask
something else is refused, where before the difference was dropped in silence."""

import hashlib
import json

from a2a.types import Message, SendMessageRequest
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from agentrt.store.a2a.tasks import TaskRecord


def first_request_digest(params: SendMessageRequest) -> str:
    """SHA-256 of what a first message asks: its role, parts, metadata, extensions and
    references, the request's metadata and its push config as sent. Not its messageId (the
    key), contextId (checked apart: the task may have been given one) or how the answer
    is wanted (blocking, history length, output modes): a true resend may differ in those."""
    message = Message()
    message.CopyFrom(params.message)
    message.message_id, message.context_id = "", ""
    asked = SendMessageRequest(message=message, metadata=params.metadata)
    if params.configuration.HasField("task_push_notification_config"):
        asked.configuration.task_push_notification_config.CopyFrom(
            params.configuration.task_push_notification_config
        )
    canonical = json.dumps(MessageToDict(asked), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def resent(known: TaskRecord, params: SendMessageRequest, digest: str) -> TaskRecord:
    """The task a first message made, for a true resend of it; InvalidParamsError for a
    message that reuses its messageId to ask something else (a task made before digests
    were kept cannot tell: it is returned, as before)."""
    message_id = params.message.message_id
    context = params.message.context_id
    if (known.first_digest is not None and known.first_digest != digest) or (
        context and context != known.context_id
    ):
        raise InvalidParamsError(
            message=f"messageId {message_id!r} already created task {known.id} with another "
            "message (its text, parts, metadata, push config or contextId differ): "
            "a new message needs a new messageId"
        )
    return known
