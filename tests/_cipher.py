"""Read a workflow's history as the Temporal server stores it and check it is ciphertext."""

from collections.abc import Iterator

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import History
from temporalio.client import Client

from agentrt.core.codec import ENCODING

# Search attributes are indexed by the server, so they are never encoded (and hold only
# config: profile and status, no user content).
_NOT_ENCODED = {"search_attributes", "indexed_fields"}


def _payloads(msg: Message) -> Iterator[tuple[str, Payload]]:
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
                yield from _payloads(item)


async def assert_ciphertext_history(client: Client, workflow_id: str, secret: str) -> int:
    """Every payload in the history is encrypted and `secret` is nowhere in its bytes.
    Returns how many payloads were checked."""
    fetched = await client.get_workflow_handle(workflow_id).fetch_history()
    raw = History(events=list(fetched.events)).SerializeToString()
    assert secret.encode() not in raw, "the prompt is in Temporal history in clear"
    checked = 0
    for event in fetched.events:
        for name, payload in _payloads(event):
            assert payload.metadata.get("encoding") == ENCODING, (
                f"{event.event_type} {name}: encoding {payload.metadata.get('encoding')!r}"
            )
            checked += 1
    assert checked > 0
    start = fetched.events[0].workflow_execution_started_event_attributes.input
    assert start.payloads and all(p.metadata["encoding"] == ENCODING for p in start.payloads)
    return checked
