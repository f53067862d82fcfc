"""A follow-up message for a run waiting for input, for `AgentRuntime.submit_input` (the A2A
API's follow-ups): checked, attested for its sender (store/security/attest.py) and sent by the one
answer path (starter/_answering.py). `send_input` leaves Temporal's errors to its caller
to map (api/a2a/tasks.py); `send_input_typed` raises them as typed InputErrors."""

from pydantic import ValidationError
from temporalio.client import Client

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.errors import (
    ErrorType,
    InputError,
    InvalidRequestError,
    RunNotAwaitingInputError,
    UnattestedInputError,
)
from agentrt.starter._answering import refusal, send_typed, send_update
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
    """Send the attested `message` by the one answer path (starter/_answering.py); returns
    once it is on record. Raises WorkflowUpdateFailedError (refused) or RPCError (no such
    run) as they are (the A2A API maps them: api/a2a/tasks.py)."""
    await send_update(client, run_id, message, input_update_id(message, sealer, run_id))


_REFUSALS: dict[str, type[InputError]] = {
    ErrorType.NOT_AWAITING_INPUT: RunNotAwaitingInputError,
    ErrorType.UNATTESTED_INPUT: UnattestedInputError,
}


async def send_input_typed(
    client: Client, run_id: str, message: InputMessage, sealer: Sealer
) -> None:
    """`send_input`, a refusal raised as its typed InputError (`RuntimeClient.answer`)."""
    await send_typed(
        client,
        run_id,
        message,
        input_update_id(message, sealer, run_id),
        refused=lambda cause: refusal(cause, _REFUSALS, InputError, f"run {run_id}: input refused"),
        ended=RunNotAwaitingInputError,
    )
