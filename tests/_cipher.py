"""Read a workflow's history as the Temporal server stores it and check it is ciphertext."""

import json
from collections.abc import Iterator

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import History
from temporalio.client import Client

from agentrt.core.codec import ENCODING, bound_run

# Search attributes are indexed by the server, so they are never encoded (and hold only
# config: profile and status, no user content).
_NOT_ENCODED = {"search_attributes", "indexed_fields"}
# The SDK's own marker bookkeeping, written by its core below the codec: a local
# activity's sequence, attempt, id, type and times, and a patch's id. The local activity's
# result and failure are the application's payloads, and are checked like any other.
MARKER_BOOKKEEPING = {
    ("core_local_activity", "data"): {
        "seq", "attempt", "activity_id", "activity_type", "complete_time", "backoff",
        "original_schedule_time", "activation_index",
    },
    ("core_patch", "patch-data"): {"id", "deprecated"},
}  # fmt: skip


def history_payloads(msg: Message) -> Iterator[tuple[str, Payload]]:
    for field, value in msg.ListFields():
        if field.name in _NOT_ENCODED or field.message_type is None:
            continue
        if field.message_type.full_name == "google.protobuf.Timestamp":
            continue
        if field.message_type.GetOptions().map_entry:
            items = [(k, v) for k, v in value.items() if isinstance(v, Message)]
        elif field.is_repeated:
            items = [(field.name, v) for v in value]
        else:
            items = [(field.name, value)]
        for name, item in items:
            if isinstance(item, Payload):
                yield name, item
            else:
                yield from history_payloads(item)


async def assert_ciphertext_history(
    client: Client, workflow_id: str, secret: str, *, bound: bool = False
) -> int:
    """Every payload in the history is encrypted and `secret` is nowhere in its bytes;
    with `bound`, each is bound to this run (core/codec.py: envelope v2, associated data).
    Returns how many payloads were checked."""
    fetched = await client.get_workflow_handle(workflow_id).fetch_history()
    raw = History(events=list(fetched.events)).SerializeToString()
    assert secret.encode() not in raw, "the prompt is in Temporal history in clear"
    checked = 0
    for event in fetched.events:
        marker = event.marker_recorded_event_attributes
        for key, allowed in MARKER_BOOKKEEPING.items():
            if event.HasField("marker_recorded_event_attributes") and marker.marker_name == key[0]:
                for p in marker.details[key[1]].payloads:
                    assert set(json.loads(p.data)) <= allowed, p.data
                    p.Clear()  # checked: no content, and the codec never sees it
        for name, payload in history_payloads(event):
            if not payload.ByteSize():
                continue
            assert payload.metadata.get("encoding") == ENCODING, (
                f"{event.event_type} {name}: encoding {payload.metadata.get('encoding')!r}"
            )
            if bound:
                assert bound_run(payload) == workflow_id, (event.event_type, name)
            checked += 1
    assert checked > 0
    start = fetched.events[0].workflow_execution_started_event_attributes.input
    assert start.payloads and all(p.metadata["encoding"] == ENCODING for p in start.payloads)
    return checked
