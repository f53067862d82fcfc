"""Terminal transitions. Each is one guarded conditional UPDATE: terminal is terminal."""

import functools
from typing import Any

from sqlalchemy import and_, bindparam, case, func, select, update
from sqlalchemy.sql import Executable

from agentrt.contracts.enums import (
    TERMINAL_STATUSES,
    EventKind,
    Outcome,
    PendingState,
    RunStatus,
    TerminationReason,
)
from agentrt.contracts.messages import Usage
from agentrt.contracts.run import Transition, TurnRecord
from agentrt.store.answer import ceiling_of, keep_text
from agentrt.store.context import StoreContext, rowcount, utcnow
from agentrt.store.rows import MessageRow, RunRow
from agentrt.store.runs import RunStore, event_row, insert_event
from agentrt.store.sealed import RUN_ANSWER
from agentrt.store.step_rows import insert_returning, write_parts

NON_TERMINAL = [s.value for s in RunStatus if s not in TERMINAL_STATUSES]


def _void_unclaimed_fence() -> dict[str, Any]:
    """A stamped but unclaimed fence on a run that settles is void: its write never ran.
    A claimed one (executing / outcome_unknown) stays as evidence."""
    unclaimed = RunRow.pending_state == PendingState.STAMPED.value
    return {
        col: case((unclaimed, None), else_=getattr(RunRow, col))
        for col in ("pending_call_id", "pending_tool", "pending_token", "pending_state")
    }


# The run row (locked) and its answer, in one statement: status, ceiling and message body.
_COMPLETING = (
    select(RunRow.status, RunRow.snapshot, RunRow.answer_ceiling, MessageRow.body)
    .outerjoin(
        MessageRow,
        and_(MessageRow.run_id == RunRow.id, MessageRow.sequence == bindparam("answer_sequence")),
    )
    .where(RunRow.id == bindparam("run_id"))
    .with_for_update(of=RunRow)
)


# The guarded completion itself (parameter names differ from the columns they set).
_COMPLETE = (
    update(RunRow)
    .where(RunRow.id == bindparam("run_id"), RunRow.status.in_(NON_TERMINAL))
    .values(
        status=RunStatus.COMPLETED.value,
        outcome=Outcome.COMPLETED.value,
        termination_reason=bindparam("reason"),
        iterations=bindparam("iterations"),
        truncated=bindparam("truncated"),
        prompt_tokens=bindparam("prompt_tokens"),
        completion_tokens=bindparam("completion_tokens"),
        cost_usd=bindparam("cost_usd"),
        answer=bindparam("answer"),
        finished_at=bindparam("now"),
        updated_at=bindparam("now"),
        revision=RunRow.revision + 1,
    )
    .execution_options(synchronize_session=False)  # the row is read as columns, not loaded
)


# The row read's own columns; the hooks' `applies` scalars follow them, in hook order.
_PROBED = len(_COMPLETING.selected_columns)


@functools.cache
def _complete_with_event(event_columns: tuple[str, ...]) -> Executable:
    """PostgreSQL: the guarded completion and its run_completed event as one statement
    (bind names of the event prefixed `event_`)."""
    event = insert_returning("event", event_columns, "event_").cte("completed_event")
    done = _COMPLETE.returning(RunRow.id).cte("completed_run")
    return select(func.count()).select_from(done).add_cte(event)


class AnswerMissingError(Exception):
    """The message the completion points at does not exist: refuse to complete."""


class SettleStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        # The completion's row read, with each hook's `applies` (built once per store).
        probes = [h.applies.label(f"hook_{i}") for i, h in enumerate(ctx.completion_hooks)
                  if h.applies is not None]  # fmt: skip
        self._completing_row = _COMPLETING.add_columns(*probes) if probes else _COMPLETING
        # Where each hook's `applies` stands in that row (None: the hook always applies).
        at = iter(range(_PROBED, _PROBED + len(probes)))
        self._probe_at = [None if h.applies is None else next(at) for h in ctx.completion_hooks]

    def complete(
        self,
        *,
        run_id: str,
        sequence: int,
        answer_sequence: int,
        iterations: int,
        truncated: bool,
        reason: TerminationReason,
        usage: Usage,
        privacy: str,
        turn: TurnRecord | None = None,
    ) -> Transition:
        """Answer, totals, COMPLETED and the revision bump in one transaction, row locked.
        With `turn`, the answer's own turn is recorded first in the same transaction (the
        model activity that completes a run on its answer: one commit, not two); it is
        kept when the run is already terminal, and rolled back with a failed completion.

        Raises when the write fails: the caller then fails the run, so a run never says
        COMPLETED without its answer.
        """
        runs = RunStore(self._ctx)
        with self._ctx.sessions.begin() as s:
            if turn is not None:
                write_parts(self._ctx, s, runs.turn_parts(run_id, turn))
            row = s.execute(
                self._completing_row, {"run_id": run_id, "answer_sequence": answer_sequence}
            ).first()
            if row is None or row.status not in NON_TERMINAL:
                return Transition(
                    applied=False, status=None if row is None else RunStatus(row.status)
                )
            if row.body is None:
                raise AnswerMissingError(f"{run_id}/{answer_sequence}")
            message = runs.open_body(run_id, answer_sequence, row.body)
            # The stored answer follows the ceiling too (metadata / none: the run fails).
            # From the row read (and locked) above: no second read of it.
            kept = keep_text(message.content, ceiling_of(row.snapshot, row.answer_ceiling))
            # What the row gets and the run_completed event says, alike.
            totals: dict[str, Any] = {
                "reason": reason.value,
                "iterations": iterations,
                "truncated": truncated,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cost_usd": usage.cost_usd,
            }
            sealed = RUN_ANSWER.seal(self._ctx.sealer, kept, run_id)
            payload = {"status": RunStatus.COMPLETED.value, **totals, "answer": message.content}
            event = event_row(
                self._ctx.sealer, run_id, sequence, EventKind.RUN_COMPLETED, iterations, payload,
                privacy,
            )  # fmt: skip
            update = {**totals, "run_id": run_id, "answer": sealed, "now": utcnow()}
            if self._ctx.postgres:  # the guarded UPDATE and the event: one statement
                params = {**update, **{f"event_{k}": v for k, v in event.items()}}
                s.execute(_complete_with_event(tuple(sorted(event))), params)
            else:
                s.execute(_COMPLETE, update)
                insert_event(s, event)
            for hook, at in zip(self._ctx.completion_hooks, self._probe_at, strict=True):
                if at is None or row[at] is not None:
                    hook.call(s, run_id, message.content)
            self._ctx.faults("complete.before_commit")
        self._ctx.faults("complete.after_commit")
        return Transition(applied=True, status=RunStatus.COMPLETED)

    def fail(
        self,
        *,
        run_id: str,
        sequence: int,
        reason: TerminationReason,
        status: RunStatus,
        outcome: Outcome,
        iterations: int,
        usage: Usage,
        error_type: str | None,
        privacy: str,
        event_kind: EventKind = EventKind.RUN_FAILED,
        extra: dict[str, Any] | None = None,
    ) -> Transition:
        """Settle a non-terminal run as FAILED or CANCELLED; a refused settle is reported."""
        if status not in TERMINAL_STATUSES or status is RunStatus.COMPLETED:
            raise ValueError(f"fail() cannot settle to {status}")
        with self._ctx.sessions.begin() as s:
            now = utcnow()
            res = s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status.in_(NON_TERMINAL))
                .values(
                    status=status.value,
                    outcome=outcome.value,
                    termination_reason=reason.value,
                    error_type=error_type,
                    iterations=iterations,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                    cost_usd=usage.cost_usd,
                    finished_at=now,
                    updated_at=now,
                    revision=RunRow.revision + 1,
                    pending_approval=None,
                    waiting_since=None,
                    **_void_unclaimed_fence(),
                )
            )
            if not rowcount(res):
                current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
                return Transition(
                    applied=False, status=None if current is None else RunStatus(current)
                )
            payload: dict[str, Any] = {
                "status": status.value,
                "reason": reason.value,
                "error_type": error_type,
                # The spend so far, so a failed (e.g. over-budget) run shows what it used.
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cost_usd": usage.cost_usd,
                **(extra or {}),
            }
            event = event_row(
                self._ctx.sealer, run_id, sequence, event_kind, iterations, payload, privacy
            )
            insert_event(s, event)
        return Transition(applied=True, status=status)
