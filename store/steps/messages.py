"""A transcript row: a message of the run at its sequence, its body sealed to that place."""

from typing import Any

from agentrt.contracts.messages import Message
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.sealed import MESSAGE_BODY, within


def message_row(sealer: Sealer, run_id: str, sequence: int, message: Message) -> dict[str, Any]:
    """A transcript row's columns, its body sealed."""
    body = MESSAGE_BODY.seal(sealer, message.model_dump_json(), within(run_id, sequence))
    return {"run_id": run_id, "sequence": sequence, "role": message.role, "body": body}
