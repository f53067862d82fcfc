"""A person's answer on an interrupted write (`on_unknown_outcome: ask`), the store side.

`run.await_reconciliation`: RUNNING → AWAITING_RECONCILIATION for the write the fence holds
with its outcome unknown, and a RECONCILE_REQUESTED event. `run.reconciled`: the answer the
workflow took, recorded in one transaction with a guarded UPDATE (the run still waits, on
this very fence: a second or stale answer matches no row) → RUNNING, a RECONCILED event
naming the principal, and what the answer does to the fence:
- applied: the write's step, with the person's result text, and the fence cleared;
- not applied, then error: the step as an error result, the fence cleared;
- not applied, then retry: the fence emptied, so the workflow stamps the write afresh
  under the same idempotency key;
- give up: the fence stays as evidence; the workflow then ends the run FAILED.
An answer without a valid attestation (store/security/attest.py) is refused and the run waits on."""

from collections.abc import Callable

from temporalio import activity

from agentrt.activities._common import ActivityGroup, store_work
from agentrt.activities.fence import _sql
from agentrt.contracts.enums import EventKind, PendingState, RunStatus, ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_RUN_AWAIT_RECONCILE, ACT_RUN_RECONCILED
from agentrt.contracts.reconcile_answer import (
    NOT_APPLIED_NOTE,
    AwaitReconcileRequest,
    ReconciledRequest,
)
from agentrt.contracts.run import Transition
from agentrt.store.db.context import StoreContext, utcnow
from agentrt.store.runs.transitions import guarded_move, progress
from agentrt.store.security import attest
from agentrt.store.steps.events import event_row, insert_event
from agentrt.store.steps.tools import ToolStepStore
from agentrt.store.steps.write import write_parts

_UNKNOWN = PendingState.OUTCOME_UNKNOWN.value
WAITING = RunStatus.AWAITING_RECONCILIATION


def uncounted(answer: str) -> None:
    """No metrics: what the activities built without the worker's counters record."""


class AnswerActivities(ActivityGroup):
    def __init__(self, ctx: StoreContext, *, answered: Callable[[str], None] = uncounted) -> None:
        self._ctx = ctx
        self._steps = ToolStepStore(ctx)
        self._answered = answered  # an answer recorded, by its kind (a metric)

    @activity.defn(name=ACT_RUN_AWAIT_RECONCILE)
    @store_work
    def await_reconciliation(self, req: AwaitReconcileRequest) -> Transition:
        ctx = self._ctx
        with ctx.sessions.begin() as s:
            guard = (_sql.CALL_ID == req.call_id, _sql.STATE == _UNKNOWN)
            # The run's progress so far, shown while it waits (an earlier build's request
            # carries none: the row keeps what it has).
            shown = progress(req.iterations, req.usage) if "usage" in req.model_fields_set else {}
            moved = guarded_move(
                s, req.run_id, guard, frm=RunStatus.RUNNING, to=WAITING, sequence=req.sequence,
                waiting_since=utcnow(), **shown,
            )  # fmt: skip
            if not moved.applied:
                return Transition(applied=moved.status is WAITING, status=moved.status)
            payload = {"call_id": req.call_id, "tool": req.tool}
            row = event_row(
                ctx.sealer, req.run_id, req.sequence, EventKind.RECONCILE_REQUESTED, req.round,
                payload, req.privacy,
            )  # fmt: skip
            insert_event(s, row)
        return Transition(applied=True, status=WAITING)

    @activity.defn(name=ACT_RUN_RECONCILED)
    @store_work
    def reconciled(self, req: ReconciledRequest) -> Transition:
        ctx, write, answer = self._ctx, req.write, req.answer
        if not attest.answer_authenticated(ctx.sealer, req.run_id, answer):
            activity.logger.warning(
                "run %s: an answer on write %s has no valid attestation; refused",
                req.run_id, write.call.call_id,
            )  # fmt: skip
            refusal = ErrorType.UNATTESTED_RECONCILIATION.value
            return Transition(applied=False, status=WAITING, refusal=refusal)
        token = write.fence_token
        assert token is not None, "the workflow sends the interrupted write with its token"
        to = RunStatus.RUNNING
        with ctx.sessions.begin() as s:
            guard = (_sql.TOKEN == token, _sql.STATE == _UNKNOWN,
                     _sql.CALL_ID == write.call.call_id)  # fmt: skip
            moved = guarded_move(
                s, req.run_id, guard, frm=WAITING, to=to, sequence=req.sequence,
                waiting_since=None,
            )  # fmt: skip
            if not moved.applied:
                # Applied already when an earlier attempt of this very step committed.
                return Transition(applied=moved.status is to, status=moved.status)
            audit = {
                "call_id": write.call.call_id, "tool": write.call.name, "fence": answer.fence,
                "answer": answer.answer, "then": answer.then if answer.answer == "not_applied"
                else None, "answered_by": answer.answered_by, "authenticated": True,
                "reason": answer.reason,
            }  # fmt: skip
            row = event_row(
                ctx.sealer, req.run_id, req.sequence, EventKind.RECONCILED, write.round, audit,
                req.privacy,
            )  # fmt: skip
            insert_event(s, row)
            if answer.answer == "not_applied" and answer.then == "retry":
                _sql.void_in(s, req.run_id, token, write.idempotency_key)
            elif answer.answer != "give_up":
                applied = answer.answer == "applied"
                content = answer.result or NOT_APPLIED_NOTE
                parts = self._steps.parts(
                    run_id=req.run_id, sequence=write.sequence, round=write.round,
                    call=write.call, effect=ToolEffect.NON_IDEMPOTENT_WRITE.value,
                    content=content, is_error=not applied, privacy=write.privacy,
                    idempotency_key=write.idempotency_key,
                    extra={"reconciled": True, "answered_by": answer.answered_by},
                )  # fmt: skip
                write_parts(ctx, s, [*parts, _sql.clear_part(req.run_id, token)])
        self._answered(answer.answer)
        return Transition(applied=True, status=to)
