"""Approval decisions and cancel requests for `AgentRuntime`: the checked request, the
decision's keyed update id (it goes by the one answer path, starter/_answering.py), the
cancel as Temporal is sent it, and the typed error for a decision the run refused."""

from pydantic import ValidationError
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.approval import (
    REASON_REQUIRED,
    ApprovalDecision,
    CancelRequest,
    reason_missing,
    refusal_sentence,
)
from agentrt.contracts.errors import (
    AlreadyDecidedError,
    ApprovalError,
    ErrorType,
    InvalidRequestError,
    ReasonRequiredError,
    RunNotAwaitingApprovalError,
    SelfApprovalError,
    StaleTurnError,
    UnattestedDecisionError,
)
from agentrt.contracts.ids import SIGNAL_CANCEL
from agentrt.starter._answering import send_typed
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.attest import attest

_REFUSALS: dict[str, type[ApprovalError]] = {
    ErrorType.NOT_AWAITING_APPROVAL: RunNotAwaitingApprovalError,
    ErrorType.STALE_TURN: StaleTurnError,
    ErrorType.ALREADY_DECIDED: AlreadyDecidedError,
    ErrorType.SAME_APPROVER: AlreadyDecidedError,
    ErrorType.POLICY_DECIDER: UnattestedDecisionError,
    ErrorType.SELF_APPROVAL: SelfApprovalError,
    ErrorType.UNATTESTED_DECISION: UnattestedDecisionError,
}
# A refusal that is the request's fault, not the run's state: raised as its own class.
_INVALID: dict[str, type[InvalidRequestError]] = {
    ErrorType.REASON_REQUIRED: ReasonRequiredError,
}


def checked_decision(
    *,
    approved: bool,
    decided_by: str,
    turn_digest: str,
    reason: str | None,
    attestation: str | None,
    attest_with: tuple[Sealer, str] | None = None,
) -> ApprovalDecision:
    """The decision, attested (store/security/attest.py) with `attest_with` (the seal key and the
    run) when it brings no attestation of its own. A denial without a reason is refused
    (ReasonRequiredError) before anything is sent."""
    if reason_missing(approved, reason):
        raise ReasonRequiredError(REASON_REQUIRED)
    if attestation is None and attest_with is not None and decided_by and turn_digest:
        sealer, run_id = attest_with
        attestation = attest(
            sealer, run_id, principal=decided_by, approved=approved, turn_digest=turn_digest
        )
    try:
        return ApprovalDecision(
            approved=approved,
            decided_by=decided_by,
            turn_digest=turn_digest,
            reason=reason,
            attestation=attestation,
        )
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid decision: {exc.errors()[0]['msg']}") from None


def checked_cancel(by: str, reason: str | None) -> CancelRequest:
    try:
        return CancelRequest(by=by, reason=reason)
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid cancel: {exc.errors()[0]['msg']}") from None


async def cancel_workflow(
    client: Client, run_id: str, request: CancelRequest, *, cause: str | None = None
) -> None:
    """`cause`: the Temporal cancel request's reason, kept in the workflow's history (a
    withdrawn start's names its withdrawal, starter/_withdrawal.py)."""
    handle = client.get_workflow_handle(run_id)
    try:
        # The signal names the actor; Temporal's own cancel request, right after it, is
        # what lets the workflow close CANCELED (the same as `temporal workflow cancel`).
        await handle.signal(SIGNAL_CANCEL, request)
        await handle.cancel(reason=cause or f"cancelled by {request.by}")
    except RPCError as err:
        if err.status is not RPCStatusCode.NOT_FOUND:  # closed meanwhile: nothing to do
            raise


def decision_update_id(decision: ApprovalDecision, sealer: Sealer, run_id: str) -> str:
    """The `decide` update's id: it dedupes a double click of the same decision
    server-side. Keyed (a MAC of run, decider, verdict and turn under the seal key): Temporal
    answers an id it has seen with that update's outcome, so an id anyone could compute
    would let a forged, refused update pre-empt the real decider's."""
    verdict = "y" if decision.approved else "n"
    claim = f"{run_id}\x1f{decision.decided_by}\x1f{verdict}\x1f{decision.turn_digest}"
    return f"decide-{decision.turn_digest[:32]}-{verdict}-{sealer.mac(claim)[:32]}"


def refusal_error(
    cause: BaseException, run_id: str, decision: ApprovalDecision, pending_digest: str | None
) -> ApprovalError | InvalidRequestError:
    """The typed error of a decision the run refused (the `decide` update's failure)."""
    kind = cause.type if isinstance(cause, ApplicationError) else None
    if kind in _INVALID:
        return _INVALID[kind](REASON_REQUIRED)
    return _REFUSALS.get(kind or "", ApprovalError)(
        refusal_sentence(
            kind or type(cause).__name__,
            run_id=run_id,
            turn_digest=decision.turn_digest,
            decided_by=decision.decided_by,
            pending_digest=pending_digest,
        )
    )


async def send_decision(
    client: Client, run_id: str, decision: ApprovalDecision, sealer: Sealer, pending: str | None
) -> None:
    """Send `decision` by the one answer path (starter/_answering.py), deduped by
    `decision_update_id`; a refusal raises its typed ApprovalError, naming the `pending`
    turn digest."""
    await send_typed(
        client,
        run_id,
        decision,
        decision_update_id(decision, sealer, run_id),
        refused=lambda cause: refusal_error(cause, run_id, decision, pending),
        ended=RunNotAwaitingApprovalError,
    )
