"""Settling a run, the activities' side (the workflow's: workflows/settle.py). Every end of
a run is one guarded conditional UPDATE (terminal is terminal) and its event:

- COMPLETED: the model activity completes the run on its answer, in the transaction that
  records the answer (`Completion`, activities/settle/completion.py; its statements in
  activities/settle/_sql.py);
- FAILED or CANCELLED: `Settle` here, and `run.fail` (its shipped name, frozen), the sync
  activity that makes it."""

from typing import Any

from sqlalchemy import delete, select, update
from temporalio import activity

from agentrt.activities._common import ActivityGroup, store_work
from agentrt.activities.fence import void_unclaimed
from agentrt.activities.settle._sql import NON_TERMINAL
from agentrt.activities.settle.completion import Ended, untold
from agentrt.contracts.enums import (
    TERMINAL_STATUSES,
    EventKind,
    Outcome,
    RunStatus,
    TerminationReason,
)
from agentrt.contracts.ids import ACT_RUN_SETTLE
from agentrt.contracts.messages import Usage
from agentrt.contracts.provider_errors import known_detail
from agentrt.contracts.redaction import redact_text
from agentrt.contracts.run import SettleRequest, Transition
from agentrt.store.db.context import StoreContext, rowcount, utcnow
from agentrt.store.db.tables import LiveRow, RunRow
from agentrt.store.runs.transitions import progress
from agentrt.store.steps.events import event_row, insert_event

MAX_DETAIL_CHARS = 500


class Settle:
    """The settle transaction (FAILED or CANCELLED)."""

    def __init__(self, ctx: StoreContext, *, ended: Ended = untold) -> None:
        self._ctx, self._ended = ctx, ended

    @store_work
    def settle(self, req: SettleRequest) -> Transition:
        """Settle a non-terminal run as FAILED or CANCELLED; a refused settle is reported
        (not applied, and the status the run has)."""
        cancelled = req.status is RunStatus.CANCELLED
        outcome = Outcome.CANCELLED if cancelled else req.outcome
        settled = self._transaction(req, outcome, _extra(req, cancelled))
        if settled.applied:
            self._ended(outcome, req.reason)
        else:
            activity.logger.info("run %s already settled as %s", req.run_id, settled.status)
        return settled

    def _transaction(
        self, req: SettleRequest, outcome: Outcome, extra: dict[str, Any] | None
    ) -> Transition:
        status, usage = req.status, req.usage
        if status not in TERMINAL_STATUSES or status is RunStatus.COMPLETED:
            raise ValueError(f"a settle cannot end in {status}")
        with self._ctx.sessions.begin() as s:
            now = utcnow()
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == req.run_id, RunRow.status.in_(NON_TERMINAL))
                .values(
                    status=status.value,
                    outcome=outcome.value,
                    termination_reason=req.reason.value,
                    error_type=req.error_type,
                    **progress(req.iterations, usage),  # the final sums, the cost with them
                    finished_at=now,
                    updated_at=now,
                    revision=RunRow.revision + 1,
                    pending_approval=None,
                    waiting_since=None,
                    **void_unclaimed(),
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == req.run_id))
                return Transition(
                    applied=False, status=None if current is None else RunStatus(current)
                )
            payload: dict[str, Any] = {
                "status": status.value,
                "reason": req.reason.value,
                "error_type": req.error_type,
                # The spend so far, so a failed (e.g. over-budget) run shows what it used.
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cost_usd": usage.cost_usd,
                **(extra or {}),
            }
            kind = EventKind.CANCEL if status is RunStatus.CANCELLED else EventKind.RUN_FAILED
            event = event_row(
                self._ctx.sealer, req.run_id, req.sequence, kind, req.iterations, payload,
                req.privacy,
            )  # fmt: skip
            insert_event(s, event)
            # A failed call's live output (withdrawn, but its rows kept for followers to see
            # the withdrawal) is pruned with the settle: the run makes no further call that
            # would, and followers read the run's end in its event.
            s.execute(delete(LiveRow).where(LiveRow.run_id == req.run_id))
        return Transition(applied=True, status=status)


def _extra(req: SettleRequest, cancelled: bool) -> dict[str, Any] | None:
    """What the event tells beside the totals: who cancelled, the budget's limits (from the
    plan the request carries), a provider's redacted reason."""
    extra: dict[str, Any] | None = {"by": req.actor, "note": req.note} if cancelled else None
    if req.reason is TerminationReason.BUDGET_EXHAUSTED:
        budget = req.budget
        extra = {"budget": None if budget is None else budget.model_dump(mode="json")}
        if req.room is not None:  # stopped before a model call whose worst case had no room
            worst = req.worst_case
            extra["room"] = req.room.model_dump(mode="json")
            extra["reserved"] = None if worst is None else _reserved(worst)
    if req.error_detail and not cancelled:
        # The provider's failure in the known shapes only, at every privacy level: its
        # text (a header, a reason) is the provider's and may carry anything.
        shown = known_detail(req.error_detail)
        extra = {**(extra or {}), "error": redact_text(shown, MAX_DETAIL_CHARS)}
    return extra


def _reserved(worst: Usage) -> dict[str, Any]:
    """The worst case of the call the budget had no room for, as the event shows it."""
    return {"tokens": worst.total_tokens, "cost_usd": worst.cost_usd}


class SettleActivities(ActivityGroup):
    """`run.fail` (settle FAILED or CANCELLED): a sync activity, its transaction on the
    worker's activity executor."""

    def __init__(self, settle: Settle) -> None:
        self._settle = settle

    @activity.defn(name=ACT_RUN_SETTLE)
    def settle(self, req: SettleRequest) -> Transition:
        return self._settle.settle(req)
