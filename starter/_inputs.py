"""A follow-up message for a run waiting for input, for `AgentRuntime.submit_input` (the A2A
API's follow-ups): checked, attested for its sender (store/security/attest.py) and sent as the
`submit_input` update. Temporal's errors are the caller's to map (api/a2a/tasks.py)."""

from pydantic import ValidationError
from temporalio.client import Client

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.errors import InvalidRequestError
from agentrt.contracts.ids import UPDATE_SUBMIT_INPUT
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.attest import attest_input


def attested_input(
    sealer: Sealer, run_id: str, *, message_id: str, text: str, sent_by: str
) -> InputMessage:
    """The message, attested for `sent_by`: only a holder of the seal key can make it."""
    try:
        message = InputMessage(message_id=message_id, text=text, sent_by=sent_by)
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid input: {exc.errors()[0]['msg']}") from None
    message.attestation = attest_input(sealer, run_id, message)
    return message


def input_update_id(message: InputMessage, sealer: Sealer, run_id: str) -> str:
    """The update's id: a resend of the same message is deduped server-side. Keyed, as a
    decision's is: an id anyone could compute would let a refused update, sent first under
    it, stand in for the real one."""
    return f"input-{sealer.mac('id' + message.claim(run_id))[:32]}"


async def send_input(client: Client, run_id: str, message: InputMessage, sealer: Sealer) -> None:
    """Send the attested `message` as the run's `submit_input` update; returns once it is
    on record. Raises WorkflowUpdateFailedError (refused) or RPCError (no such run)."""
    handle = client.get_workflow_handle(run_id)
    await handle.execute_update(
        UPDATE_SUBMIT_INPUT, message, id=input_update_id(message, sealer, run_id)
    )
