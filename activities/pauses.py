"""The approval and input pauses: suspend a run for a decision on its turn and record the
decision, or pause it for the remote user's follow-up and record that. Each is one guarded
status change with its event, in one transaction, beside the sync activity that runs it
on the worker's activity executor. A refused change writes nothing and reports the status
that refused it (e.g. the run was cancelled first).

Where the profile requires attested decisions, the resume refuses one whose attestation
does not open (a DECISION_REFUSED event; the run keeps waiting): the workflow holds no key
to check it (store/security/attest.py). A follow-up message always needs one (an INPUT_REFUSED
event otherwise; the run keeps waiting)."""

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from temporalio import activity

from agentrt.activities._common import ActivityGroup, store_work
from agentrt.contracts.enums import EventKind, Outcome, RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import (
    ACT_RUN_ADD_INPUT,
    ACT_RUN_AWAIT_INPUT,
    ACT_RUN_RESUME,
    ACT_RUN_SUSPEND,
)
from agentrt.contracts.messages import Message
from agentrt.contracts.pauses import (
    AddInputRequest,
    AwaitInputRequest,
    PauseRequest,
    ResumeRequest,
    SuspendRequest,
)
from agentrt.contracts.run import Transition
from agentrt.store.db.context import StoreContext, as_utc, utcnow
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.store.runs.transitions import RunColumns, move, progress
from agentrt.store.security import attest
from agentrt.store.security.sealed import RUN_PENDING_APPROVAL
from agentrt.store.steps.events import event_row, insert_event


class PauseActivities(ActivityGroup):
    """`approval_wait` observes, in seconds, each wait a decision ended (a metric)."""

    def __init__(self, ctx: StoreContext, *, approval_wait: Callable[[float], None]) -> None:
        self._ctx = ctx
        self._approval_wait = approval_wait

    @activity.defn(name=ACT_RUN_SUSPEND)
    @store_work
    def suspend(self, req: SuspendRequest) -> Transition:
        return suspend(self._ctx, req)

    @activity.defn(name=ACT_RUN_RESUME)
    @store_work
    def resume(self, req: ResumeRequest) -> Transition:
        done, waited = resume(self._ctx, req)
        if waited is not None:
            self._approval_wait(waited)
        return done

    @activity.defn(name=ACT_RUN_AWAIT_INPUT)
    @store_work
    def await_input(self, req: AwaitInputRequest) -> Transition:
        return await_input(self._ctx, req)

    @activity.defn(name=ACT_RUN_ADD_INPUT)
    @store_work
    def add_input(self, req: AddInputRequest) -> Transition:
        return add_input(self._ctx, req)


# --- the transitions ----------------------------------------------------------------------


def _event(
    ctx: StoreContext, s: Session, req: PauseRequest, kind: EventKind, round: int,
    payload: dict[str, Any],
) -> None:  # fmt: skip
    """The step's event, at the request's sequence and the run's privacy level."""
    row = event_row(ctx.sealer, req.run_id, req.sequence, kind, round, payload, req.privacy)
    insert_event(s, row)


def _moved(moved: Transition, to: RunStatus) -> Transition:
    """Applied when the run is now in `to`: by this call, or by an earlier attempt of this
    very step that committed (a retried activity)."""
    return Transition(applied=moved.status is to, status=moved.status)


def suspend(ctx: StoreContext, req: SuspendRequest) -> Transition:
    """RUNNING → WAITING_FOR_APPROVAL with the pending turn (sealed) and its event."""
    pending = req.pending
    sealed = RUN_PENDING_APPROVAL.seal(ctx.sealer, pending.model_dump_json(), req.run_id)
    to = RunStatus.WAITING_FOR_APPROVAL
    with ctx.sessions.begin() as s:
        waiting: RunColumns = {
            "outcome": Outcome.AWAITING_APPROVAL.value,
            "pending_approval": sealed,
            "waiting_since": utcnow(),
            **progress(req.iterations, req.usage),
        }
        moved = move(s, req.run_id, frm=RunStatus.RUNNING, to=to, sequence=req.sequence, **waiting)
        if not moved.applied:
            return _moved(moved, to)
        ctx.faults("suspend.before_commit")
        payload: dict[str, Any] = {
            "turn_digest": pending.turn_digest,
            "tools": [c.name for c in pending.calls],
            "tool_calls": [c.model_dump() for c in pending.calls],
        }
        _event(ctx, s, req, EventKind.APPROVAL_REQUESTED, pending.round, payload)
    return Transition(applied=True, status=to)


def resume(ctx: StoreContext, req: ResumeRequest) -> tuple[Transition, float | None]:
    """WAITING_FOR_APPROVAL → RUNNING, and the APPROVAL event, in one transaction: the
    decision is on record before any approved write can run (fail closed). With the
    seconds the run waited, when this call ended the wait.

    With `attested_only`, a decision whose attestation is missing or does not open as
    exactly this decision is refused instead: a DECISION_REFUSED event, the run not moved."""
    if req.attested_only and not attest.authenticated(ctx.sealer, req.run_id, req.decision):
        with ctx.sessions.begin() as s:
            payload = attest.refusal(req.decision)
            _event(ctx, s, req, EventKind.DECISION_REFUSED, req.round, payload)
        refused = Transition(
            applied=False,
            status=RunStatus.WAITING_FOR_APPROVAL,
            refusal=ErrorType.UNATTESTED_DECISION.value,
        )
        return refused, None
    to = RunStatus.RUNNING
    with ctx.sessions.begin() as s:
        # Read in the transaction that ends the wait: only the call that moves the row out
        # of WAITING observes it (a retried resume finds the run RUNNING already).
        since = as_utc(s.scalar(select(RunRow.waiting_since).where(RunRow.id == req.run_id)))
        moved = move(
            s, req.run_id, frm=RunStatus.WAITING_FOR_APPROVAL, to=to, sequence=req.sequence,
            outcome=None, pending_approval=None, waiting_since=None,
        )  # fmt: skip
        if not moved.applied:
            return _moved(moved, to), None
        audit = attest.audit(ctx.sealer, req.run_id, req.decision)
        _event(ctx, s, req, EventKind.APPROVAL, req.round, audit)
    waited = None if since is None else max(0.0, (utcnow() - since).total_seconds())
    return Transition(applied=True, status=to), waited


def await_input(ctx: StoreContext, req: AwaitInputRequest) -> Transition:
    """RUNNING → WAITING_FOR_INPUT: the model asked the user for more information, or a
    write asked the operator (its question in the event)."""
    to = RunStatus.WAITING_FOR_INPUT
    with ctx.sessions.begin() as s:
        waiting: RunColumns = {
            "outcome": Outcome.AWAITING_INPUT.value,
            "waiting_since": utcnow(),
            **progress(req.iterations, req.usage),
        }
        moved = move(s, req.run_id, frm=RunStatus.RUNNING, to=to, sequence=req.sequence, **waiting)
        if not moved.applied:
            return _moved(moved, to)
        _event(ctx, s, req, EventKind.INPUT_REQUESTED, req.round, _asked(req))
    return Transition(applied=True, status=to)


def _asked(req: AwaitInputRequest) -> dict[str, Any]:
    """What the operator is asked: a write's question (a remote agent's), with its call."""
    if req.question is None:
        return {}
    return {"question": req.question, "call_id": req.call_id, "tool": req.tool}


def add_input(ctx: StoreContext, req: AddInputRequest) -> Transition:
    """WAITING_FOR_INPUT → RUNNING with the follow-up appended to the transcript (an answer
    to a write's question is not: the write sends it, and its result is the call's). A message
    whose attestation is missing or does not open as exactly this message (its sender, id,
    text and run) is refused instead: an INPUT_REFUSED event, the run not moved."""
    to, message = RunStatus.RUNNING, req.message
    if not attest.input_authenticated(ctx.sealer, req.run_id, message):
        with ctx.sessions.begin() as s:
            _event(ctx, s, req, EventKind.INPUT_REFUSED, req.round, attest.input_refusal(message))
        return Transition(
            applied=False,
            status=RunStatus.WAITING_FOR_INPUT,
            refusal=ErrorType.UNATTESTED_INPUT.value,
        )
    with ctx.sessions.begin() as s:
        moved = move(
            s, req.run_id, frm=RunStatus.WAITING_FOR_INPUT, to=to, sequence=req.sequence,
            outcome=None, waiting_since=None,
        )  # fmt: skip
        if not moved.applied:
            return _moved(moved, to)
        if req.call_id is None:  # an answer to a write's question goes to the write
            RunStore(ctx).append_message(
                s, req.run_id, req.sequence, Message(role="user", content=message.text)
            )
        audit = {
            "sent_by": message.sent_by,
            "message_id": message.message_id,
            "content": message.text,
            **({"call_id": req.call_id} if req.call_id is not None else {}),
        }
        _event(ctx, s, req, EventKind.INPUT, req.round, audit)
    return Transition(applied=True, status=to)
