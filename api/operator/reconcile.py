"""`POST /runs/{id}/reconcile`: the authenticated principal says what the target system
shows of the write a run waits on (AWAITING_RECONCILIATION; contracts/reconcile_answer.py
says what each answer does). The API attests the principal (store/security/attest.py), so nothing in
the body names who answers; the workflow takes one answer per wait and refuses a stale or
second one (409)."""

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from agentrt.api.operator import auth
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.errors import RESPONSES, OpsError, bad_request, conflict, not_found
from agentrt.api.operator.routes import State, run_id_of
from agentrt.api.operator.views import RunOut
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    AgentRuntimeError,
    ApproverReconciliationError,
    InvalidRequestError,
    ReconcileError,
    ResolutionError,
    RunNotFoundError,
    SelfReconciliationError,
)
from agentrt.contracts.reconcile import MAX_RESULT_CHARS
from agentrt.contracts.reconcile_answer import Answer, Resolved, Then

router = APIRouter(responses=RESPONSES)
FOUR_EYES = {
    SelfReconciliationError.code: "four-eyes: the initiator may not answer not_applied",
    ApproverReconciliationError.code: "four-eyes: the write's approver may not retry it",
}


class ReconcileIn(BaseModel):
    call_id: str = Field(min_length=1, max_length=200, description="the pending write's call")
    fence: str = Field(min_length=1, max_length=64, description="the pending write's fence")
    answer: Answer
    result: str | None = Field(
        default=None,
        max_length=MAX_RESULT_CHARS,
        description="applied: the result the model sees (required); not_applied+error: "
        "the error text",
    )
    then: Then = Field(default="retry", description="what not_applied does")
    reason: str | None = Field(default=None, max_length=2000)


class ReconcileOut(BaseModel):
    answered_by: str
    answer: Answer
    run: RunOut


@router.post("/runs/{run_id}/reconcile", response_model=ReconcileOut, tags=["approvals"])
async def reconcile(
    run_id: str,
    body: ReconcileIn,
    state: State,
    who: Annotated[Principal, Depends(auth.require(auth.RECONCILE))],
) -> ReconcileOut:
    """Answer for the interrupted write the run waits on, as the authenticated principal."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    if view.status is not RunStatus.AWAITING_RECONCILIATION:
        raise conflict("not_awaiting_reconciliation", f"run {view.run_id} is {view.status.value}")
    try:
        after = await state.require_runtime().reconcile(
            view.run_id, answered_by=who.name, **body.model_dump()
        )
    except AgentRuntimeError as exc:
        raise _refused(exc, view.run_id) from None
    return ReconcileOut(answered_by=who.name, answer=body.answer, run=await state.out(after))


class ResolutionIn(BaseModel):
    call_id: str = Field(min_length=1, max_length=200, description="the ended run's write")
    fence: str = Field(min_length=1, max_length=64, description="the write's fence")
    outcome: Resolved = Field(description="what the target system shows")
    note: str = Field(min_length=1, max_length=2000, description="what was checked (audited)")


class ResolutionOut(BaseModel):
    resolved_by: str
    outcome: Resolved
    run: RunOut


@router.post("/runs/{run_id}/resolution", response_model=ResolutionOut, tags=["approvals"])
async def resolution(
    run_id: str,
    body: ResolutionIn,
    state: State,
    who: Annotated[Principal, Depends(auth.require(auth.RESOLVE))],
) -> ResolutionOut:
    """Record what the target system shows of the write of a run that ended with its outcome
    unknown, as the authenticated principal."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    try:
        after = await state.require_runtime().resolve(
            view.run_id, resolved_by=who.name, **body.model_dump()
        )
    except AgentRuntimeError as exc:
        raise _refused(exc, view.run_id) from None
    return ResolutionOut(resolved_by=who.name, outcome=body.outcome, run=await state.out(after))


def _refused(exc: AgentRuntimeError, run_id: str) -> Exception:
    """The typed error an answer's or a resolution's refusal is, in the API's terms; any
    other error as it is."""
    if isinstance(exc, RunNotFoundError):
        return not_found(run_id)
    if isinstance(exc, SelfReconciliationError | ApproverReconciliationError):
        return OpsError(403, exc.code, FOUR_EYES[exc.code])
    if isinstance(exc, ReconcileError | ResolutionError):
        return conflict(exc.code, str(exc))
    if isinstance(exc, InvalidRequestError):
        return bad_request("invalid_request", str(exc))
    return exc
