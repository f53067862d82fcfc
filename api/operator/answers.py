"""`POST /runs/{id}/answers`: every answer a person gives a run, one route shape. The body's
`kind` says which (contracts/answers.py): a `decision` on the pending turn (scope
runs:decide), a `reconcile` answer on the write the run waits on (runs:reconcile), a
`resolution` of the unknown write an ended run left (runs:resolve), and `input` for a run
waiting for input (runs:decide: a remote agent's question, or a model's). The authenticated
principal is the author: nothing in a body names who answers; the API attests the
principal (store/security/attest.py, each kind under its own seal) and the client's one `answer`
(starter/client.py) takes it to the run. (An A2A task's owner answers through the A2A API.)

The routes each kind had before (`/decision`, `/reconcile`, `/resolution`) stay, as
aliases of this one: the same checks in the same order, the same refusals, their own
response shapes."""

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from agentrt.api.operator import auth
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.errors import (
    RESPONSES,
    OpsError,
    bad_request,
    conflict,
    forbidden,
    not_found,
)
from agentrt.api.operator.routes import State, run_id_of
from agentrt.api.operator.views import DecisionIn, DecisionOut, RunOut
from agentrt.contracts.answers import AnswerKind
from agentrt.contracts.approval import REASON_REQUIRED, reason_missing
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    AgentRuntimeError,
    AlreadyDecidedError,
    ApprovalError,
    ApproverReconciliationError,
    InvalidRequestError,
    PromptTooLongError,
    ReasonRequiredError,
    ReconcileError,
    ResolutionError,
    RunNotAwaitingApprovalError,
    RunNotFoundError,
    SelfApprovalError,
    SelfReconciliationError,
    StaleTurnError,
)
from agentrt.contracts.reconcile import MAX_RESULT_CHARS
from agentrt.contracts.reconcile_answer import Answer, Resolved, Then
from agentrt.contracts.run import PROMPT_CHARS_CEILING
from agentrt.contracts.views import RunView
from agentrt.store.security.attest import attest

router = APIRouter(responses=RESPONSES)


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


class ResolutionIn(BaseModel):
    call_id: str = Field(min_length=1, max_length=200, description="the ended run's write")
    fence: str = Field(min_length=1, max_length=64, description="the write's fence")
    outcome: Resolved = Field(description="what the target system shows")
    note: str = Field(min_length=1, max_length=2000, description="what was checked (audited)")


class InputIn(BaseModel):
    message_id: str = Field(
        min_length=1, max_length=200,
        description="the client's id of this message: sent again, it is the same message",
    )  # fmt: skip
    text: str = Field(min_length=1, max_length=PROMPT_CHARS_CEILING, description="the answer")


class InputAnswerIn(InputIn):
    kind: Literal["input"]


class DecisionAnswerIn(DecisionIn):
    kind: Literal["decision"]


class ReconcileAnswerIn(ReconcileIn):
    kind: Literal["reconcile"]


class ResolutionAnswerIn(ResolutionIn):
    kind: Literal["resolution"]


AnswerIn = Annotated[
    DecisionAnswerIn | ReconcileAnswerIn | ResolutionAnswerIn | InputAnswerIn,
    Field(discriminator="kind"),
]
SCOPES: dict[str, str] = {
    "decision": auth.DECIDE,
    "input": auth.DECIDE,
    "reconcile": auth.RECONCILE,
    "resolution": auth.RESOLVE,
}


class AnswerOut(BaseModel):
    kind: AnswerKind
    answered_by: str
    run: RunOut


@router.post("/runs/{run_id}/answers", response_model=AnswerOut, tags=["approvals"])
async def answer(
    run_id: str,
    body: AnswerIn,
    state: State,
    who: Annotated[Principal, Depends(auth.require(auth.DECIDE, auth.RECONCILE, auth.RESOLVE))],
) -> AnswerOut:
    """Answer the run as the authenticated principal: the body's `kind` says what the
    answer is, and the principal needs that kind's scope."""
    scope = SCOPES[body.kind]
    if not who.has(scope):
        raise forbidden(f"the token of {who.name} lacks the scope {scope}")
    after = await give(state, who, run_id, body)
    return AnswerOut(kind=body.kind, answered_by=who.name, run=await state.out(after))


async def give(
    state: State,
    who: Principal,
    run_id: str,
    body: DecisionIn | ReconcileIn | ResolutionIn | InputIn,
) -> RunView:
    """The one handling of an answer, for this route and its aliases: the run the principal
    may see, in the state the kind needs, given the answer as the principal; a refusal is
    the kind's typed API error, changing nothing."""
    if isinstance(body, ReconcileIn | ResolutionIn):
        return await _statement(state, who, run_id, body)
    if isinstance(body, InputIn):
        return await _input(state, who, run_id, body)
    approved = body.verdict == "approve"
    if reason_missing(approved, body.reason):
        raise bad_request(ReasonRequiredError.code, REASON_REQUIRED)
    view = await state.visible(run_id_of(run_id), who.visible_to)
    if view.status is not RunStatus.WAITING_FOR_APPROVAL:
        raise conflict("not_awaiting_approval", f"run {view.run_id} is {view.status.value}")
    seal = attest(
        state.sealer, view.run_id, principal=who.name, approved=approved,
        turn_digest=body.turn_digest,
    )  # fmt: skip
    try:
        return await state.require_runtime().approve(
            view.run_id, approved=approved, decided_by=who.name, turn_digest=body.turn_digest,
            reason=body.reason, attestation=seal,
        )  # fmt: skip
    except RunNotFoundError:
        raise not_found(view.run_id) from None
    except ApprovalError as exc:
        raise _decision_refused(exc) from None
    except InvalidRequestError as exc:
        raise bad_request(exc.code, str(exc)) from None


async def _statement(
    state: State, who: Principal, run_id: str, body: ReconcileIn | ResolutionIn
) -> RunView:
    """A reconcile answer (the run waits on the write) or a resolution (the run ended)."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    fields = body.model_dump(exclude={"kind"})
    runtime = state.require_runtime()
    try:
        if isinstance(body, ResolutionIn):
            return await runtime.resolve(view.run_id, resolved_by=who.name, **fields)
        if view.status is not RunStatus.AWAITING_RECONCILIATION:
            raise conflict(
                "not_awaiting_reconciliation", f"run {view.run_id} is {view.status.value}"
            )
        return await runtime.reconcile(view.run_id, answered_by=who.name, **fields)
    except AgentRuntimeError as exc:
        raise _statement_refused(exc, view.run_id) from None


async def _input(state: State, who: Principal, run_id: str, body: InputIn) -> RunView:
    """A message for a run waiting for input, sent as the principal (the `input` event names
    it); the same message id again is the same message, recorded once."""
    runtime = state.require_runtime()
    if len(body.text) > runtime.max_prompt_chars:  # 413, as a start's prompt over the cap
        raise PromptTooLongError(
            f"the input is {len(body.text)} characters, over the cap of {runtime.max_prompt_chars}"
        )
    view = await state.visible(run_id_of(run_id), who.visible_to)
    if view.status is not RunStatus.WAITING_FOR_INPUT:
        raise conflict("not_awaiting_input", f"run {view.run_id} is {view.status.value}")
    try:
        await runtime.submit_input(
            view.run_id, message_id=body.message_id, text=body.text, sent_by=who.name
        )
    except (WorkflowUpdateFailedError, RPCError, InvalidRequestError):
        # The pause closed meanwhile (another answer, a cancel): nothing was taken.
        raise conflict(
            "not_awaiting_input", f"run {view.run_id} is not waiting for input"
        ) from None
    return await state.visible(view.run_id, who.visible_to)


FOUR_EYES = {
    SelfReconciliationError.code: "four-eyes: the initiator may not answer not_applied",
    ApproverReconciliationError.code: "four-eyes: the write's approver may not retry it",
}


def _decision_refused(exc: ApprovalError) -> OpsError:
    if isinstance(exc, SelfApprovalError):
        return OpsError(403, "self_approval", "four-eyes: the initiator may not approve")
    if isinstance(exc, StaleTurnError):
        return conflict("stale_turn", "the digest does not name the pending turn")
    if isinstance(exc, AlreadyDecidedError):
        return conflict("already_decided", "this turn is already decided")
    if isinstance(exc, RunNotAwaitingApprovalError):
        return conflict("not_awaiting_approval", str(exc))
    return conflict("decision_refused", str(exc))


def _statement_refused(exc: AgentRuntimeError, run_id: str) -> Exception:
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


# --- the routes each kind had before: aliases of `answer` ---------------------------------


@router.post("/runs/{run_id}/decision", response_model=DecisionOut, tags=["approvals"])
async def decide(run_id: str, body: DecisionIn, state: State, who: auth.Decider) -> DecisionOut:
    """Approve or deny the pending turn named by its digest, as the authenticated principal.
    A denial needs a reason (400 `reason_required`), as on every other path. (`answers`
    with `kind: decision`.)"""
    after = await give(state, who, run_id, body)
    return DecisionOut(
        decided_by=who.name, verdict=body.verdict, turn_digest=body.turn_digest,
        run=await state.out(after),
    )  # fmt: skip


class ReconcileOut(BaseModel):
    answered_by: str
    answer: Answer
    run: RunOut


@router.post("/runs/{run_id}/reconcile", response_model=ReconcileOut, tags=["approvals"])
async def reconcile(
    run_id: str, body: ReconcileIn, state: State, who: auth.Reconciler
) -> ReconcileOut:
    """Answer for the interrupted write the run waits on, as the authenticated principal.
    (`answers` with `kind: reconcile`.)"""
    after = await give(state, who, run_id, body)
    return ReconcileOut(answered_by=who.name, answer=body.answer, run=await state.out(after))


class ResolutionOut(BaseModel):
    resolved_by: str
    outcome: Resolved
    run: RunOut


@router.post("/runs/{run_id}/resolution", response_model=ResolutionOut, tags=["approvals"])
async def resolution(
    run_id: str, body: ResolutionIn, state: State, who: auth.Resolver
) -> ResolutionOut:
    """Record what the target system shows of the write of a run that ended with its outcome
    unknown, as the authenticated principal. (`answers` with `kind: resolution`.)"""
    after = await give(state, who, run_id, body)
    return ResolutionOut(resolved_by=who.name, outcome=body.outcome, run=await state.out(after))
