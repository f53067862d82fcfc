"""A person's answer on an interrupted write, for the clients: the checked answer, its
keyed update id (it goes by the one answer path, starter/_answering.py), and the typed
error for an answer the run refused (contracts/reconcile_answer.py says what each answer does)."""

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio.client import Client

from agentrt.contracts.errors import (
    AlreadyReconciledError,
    ApproverReconciliationError,
    ErrorType,
    InvalidRequestError,
    ReconcileError,
    RunNotAwaitingReconciliationError,
    SelfReconciliationError,
    StaleReconciliationError,
    UnattestedReconciliationError,
)
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
from agentrt.starter._answering import refusal, send_typed
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.attest import attest_answer, attest_resolution

_REFUSALS: dict[str, type[ReconcileError]] = {
    ErrorType.NOT_AWAITING_RECONCILIATION: RunNotAwaitingReconciliationError,
    ErrorType.STALE_RECONCILIATION: StaleReconciliationError,
    ErrorType.ALREADY_RECONCILED: AlreadyReconciledError,
    ErrorType.UNATTESTED_RECONCILIATION: UnattestedReconciliationError,
    ErrorType.SELF_RECONCILIATION: SelfReconciliationError,
    ErrorType.APPROVER_RECONCILIATION: ApproverReconciliationError,
}


def checked_answer(
    attest_with: tuple[Sealer, str] | None = None, **fields: object
) -> ReconcileAnswer:
    """The answer, attested with `attest_with` (the seal key and the run) when it brings no
    attestation of its own."""
    answer = _checked(ReconcileAnswer, "answer", fields)
    if answer.attestation is None and attest_with is not None:
        answer.attestation = attest_answer(attest_with[0], attest_with[1], answer)
    return answer


def checked_resolution(
    attest_with: tuple[Sealer, str] | None = None, **fields: object
) -> WriteResolution:
    """An operator's resolution of an ended run's unknown write, attested likewise."""
    resolution = _checked(WriteResolution, "resolution", fields)
    if resolution.attestation is None and attest_with is not None:
        resolution.attestation = attest_resolution(attest_with[0], attest_with[1], resolution)
    return resolution


M = TypeVar("M", bound=BaseModel)


def _checked(model: type[M], what: str, fields: dict[str, object]) -> M:
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid {what}: {exc.errors()[0]['msg']}") from None


def answer_update_id(answer: ReconcileAnswer, sealer: Sealer, run_id: str) -> str:
    """The update's id: a double click of the same answer is deduped server-side. Keyed,
    as a decision's is (starter/_deciding.py): an id anyone could compute would let a
    refused update pre-empt the real one."""
    return f"reconcile-{answer.fence}-{sealer.mac('id' + answer.claim(run_id))[:32]}"


async def send_answer(client: Client, run_id: str, answer: ReconcileAnswer, sealer: Sealer) -> None:
    """Send `answer` by the one answer path (starter/_answering.py); a refusal raises its
    typed error."""
    await send_typed(
        client,
        run_id,
        answer,
        answer_update_id(answer, sealer, run_id),
        refused=lambda cause: refusal(
            cause, _REFUSALS, ReconcileError, f"run {run_id}: answer refused"
        ),
        ended=RunNotAwaitingReconciliationError,
    )
