"""The run's completion: one guarded transaction (the answer and its turn, the totals,
COMPLETED, the run_completed event and the completion hooks). The model activity
(`model.complete`) makes it when a model turn is the answer (activities/settle/on_answer.py),
on the workflow's terms (contracts.turn.turn_end): the completion costs no activity and no
workflow task of its own. It is the one way a run completes (`run.complete`, the workflow's
own completion step, served runs recorded before 0.3.0 and is retired)."""

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable
from temporalio import activity

from agentrt.activities._common import (
    fatal,
    store_work,
)
from agentrt.activities.settle._sql import (
    COMPLETE,
    COMPLETING,
    NON_TERMINAL,
    answered_in_one,
    complete_with_event,
    completed_first,
)
from agentrt.contracts.enums import (
    EventKind,
    Outcome,
    RunStatus,
    TerminationReason,
)
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.output import answer_json
from agentrt.contracts.run import (
    CompleteRequest,
    Transition,
    TurnRecord,
)
from agentrt.store.db.context import StoreContext, rowcount, utcnow
from agentrt.store.runs.answer import ResultNotRetainableError, ceiling_of, keep_json, keep_text
from agentrt.store.runs.record import RunStore
from agentrt.store.security.sealed import RUN_ANSWER, RUN_OUTPUT
from agentrt.store.steps.deferred import riding
from agentrt.store.steps.events import event_row
from agentrt.store.steps.write import Part, write_parts, write_rows

# Told of what a completion did, for the worker's metrics: a run that ended (outcome,
# reason), and the answer's turn recorded in the completion's transaction (its payload).
Ended = Callable[[Outcome, TerminationReason], None]
Turned = Callable[[dict[str, Any]], None]


def untold(*_args: Any) -> None:
    """No metrics."""


# The row read's own columns; the hooks' `applies` scalars follow them, in hook order.
_PROBED = len(COMPLETING.selected_columns)


class AnswerMissingError(Exception):
    """The message the completion points at does not exist: refuse to complete."""


class Completion:
    """The completion transaction, built once per worker (its statements with the
    completion hooks' probes)."""

    def __init__(self, ctx: StoreContext, *, ended: Ended = untold, turned: Turned = untold):
        self._ctx, self._runs = ctx, RunStore(ctx)
        self._ended, self._turned = ended, turned
        probes = [h.applies.label(f"hook_{i}") for i, h in enumerate(ctx.completion_hooks)
                  if h.applies is not None]  # fmt: skip
        self._completing_row = COMPLETING.add_columns(*probes) if probes else COMPLETING
        # Where each hook's `applies` stands in that row (None: the hook always applies).
        at = iter(range(_PROBED, _PROBED + len(probes)))
        self._probe_at = [None if h.applies is None else next(at) for h in ctx.completion_hooks]
        # The one-statement completion (PostgreSQL): the probes as its guards, and built
        # once per shape of its rows and answer level.
        self._probes = [h.applies for h in ctx.completion_hooks if h.applies is not None]
        self._always = any(h.applies is None for h in ctx.completion_hooks)
        self._one: dict[tuple[Any, ...], Executable] = {}
        self._first: dict[str, Executable] = {}  # SQLite's, per answer level

    @store_work
    def complete(self, req: CompleteRequest, turn: TurnRecord | None = None) -> Transition:
        """Complete the run; a completed run answers "not applied, COMPLETED" (idempotent).
        Raises when the write fails: a run never says COMPLETED without its answer. With
        `turn` (the model activity's answer), the answer's turn is recorded first in the
        same transaction: kept when the run is already terminal, rolled back with a failed
        completion."""
        try:
            settled = self._transaction(req, turn)
        except ResultNotRetainableError:
            activity.logger.warning("completion of run %s: result not retainable", req.run_id)
            raise fatal(
                "the result may not be kept under the privacy policy",
                ErrorType.RESULT_NOT_RETAINABLE,
            ) from None
        except Exception as exc:
            # Exception text may hold content: log the type only.
            activity.logger.warning("completion of run %s failed: %s", req.run_id,
                                    type(exc).__name__)  # fmt: skip
            raise
        if turn is not None:
            self._turned(turn.payload)
        if settled.applied:
            self._ended(Outcome.COMPLETED, req.termination_reason)
        return settled

    def _transaction(self, req: CompleteRequest, turn: TurnRecord | None) -> Transition:
        """Answer, totals, COMPLETED and the revision bump in one transaction, row locked.
        On PostgreSQL, an answer this activity has just made is tried first as one
        statement (`_in_one`); what that statement does not cover takes this full way."""
        run_id = req.run_id
        if turn is not None and self._in_one(req, turn):
            self._ctx.faults("complete.after_commit")
            return Transition(applied=True, status=RunStatus.COMPLETED)
        # A Core connection, not an ORM session (store/db/context.py): a session is made on it
        # only for a hook that applies.
        with self._ctx.transaction() as c:
            if turn is not None:  # with the reads that ride with it
                write_rows(self._ctx, c, [*riding(run_id, turn.pending),
                                          self._runs.turn_parts(run_id, turn)])  # fmt: skip
            row = c.execute(
                self._completing_row, {"run_id": run_id, "answer_sequence": req.answer_sequence}
            ).first()
            if row is None or row[0] not in NON_TERMINAL:
                return Transition(applied=False, status=None if row is None else RunStatus(row[0]))
            _, snapshot, answer_ceiling, body = row[:_PROBED]
            if body is None:
                raise AnswerMissingError(f"{run_id}/{req.answer_sequence}")
            message = self._runs.open_body(run_id, req.answer_sequence, body)
            # The stored answer follows the ceiling too (metadata / none: the run fails).
            # From the row read (and locked) above: no second read of it.
            update, event = self._values(req, message.content, ceiling_of(snapshot, answer_ceiling))
            if self._ctx.postgres:  # the guarded UPDATE and the event: one statement
                params = {**update, **{f"event_{k}": v for k, v in event.items()}}
                c.execute(complete_with_event(tuple(sorted(event))), params)
            else:
                c.execute(COMPLETE, update)
                write_parts(self._ctx, c, [Part("event", event)])
            hooks = zip(self._ctx.completion_hooks, self._probe_at, strict=True)
            applying = [hook for hook, at in hooks if at is None or row[at] is not None]
            if applying:
                # The session joins the connection's transaction; the block commits it.
                with Session(bind=c) as s:
                    for hook in applying:
                        hook.call(s, run_id, message.content)
            self._ctx.faults("complete.before_commit")
        self._ctx.faults("complete.after_commit")
        return Transition(applied=True, status=RunStatus.COMPLETED)

    def _values(
        self, req: CompleteRequest, answer: str, ceiling: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The guarded UPDATE's parameters and the run_completed event's row, the answer
        kept at `ceiling` (raises ResultNotRetainableError at metadata / none)."""
        run_id = req.run_id
        kept = keep_text(answer, ceiling)
        # A typed answer's object, kept as its text is (the model activity validated it).
        output = None
        if req.typed:
            value = keep_json(answer_json(answer), ceiling)
            output = RUN_OUTPUT.seal(self._ctx.sealer, json.dumps(value), run_id)
        # What the row gets and the run_completed event says, alike.
        totals: dict[str, Any] = {
            "reason": req.termination_reason.value,
            "iterations": req.iterations,
            "truncated": req.truncated,
            "prompt_tokens": req.usage.prompt_tokens,
            "completion_tokens": req.usage.completion_tokens,
            "cost_usd": req.usage.cost_usd,
        }
        sealed = RUN_ANSWER.seal(self._ctx.sealer, kept, run_id)
        payload = {"status": RunStatus.COMPLETED.value, **totals, "answer": answer}
        event = event_row(
            self._ctx.sealer, run_id, req.sequence, EventKind.RUN_COMPLETED, req.iterations,
            payload, req.privacy,
        )  # fmt: skip
        update = {**totals, "run_id": run_id, "answer": sealed, "output": output, "now": utcnow()}
        return update, event

    def _in_one(self, req: CompleteRequest, turn: TurnRecord) -> bool:
        """PostgreSQL: the answer's turn and the whole completion as one statement in
        autocommit (activities/settle/_sql.answered_in_one; SQLite: `_completed_first`),
        for an answer this activity made (`turn`), at the answer level of the snapshot it
        read with the turn's inputs. True when it completed the run. False when it does not
        apply (no level, a hook that always applies, an answer the level does not keep) or
        the guards held it back: the full way, which reads the row, decides (writing the
        turn's rows, or again as duplicates: nothing)."""
        level = turn.answer_level
        if level is None or self._always:
            return False
        try:
            update, event = self._values(req, turn.message.content, level)
        except ResultNotRetainableError:
            return False  # the full way refuses it, with the turn kept as it always was
        if not self._ctx.postgres:
            return self._completed_first(req, turn, (update, event), level)
        message = self._runs.message_row(req.run_id, turn.sequence, turn.message)
        llm = self._runs.llm_event_row(req.run_id, turn)
        rides = riding(req.run_id, turn.pending)  # the reads that ride with the answer
        params = {
            **update,
            **{f"message_{k}": v for k, v in message.items()},
            **{f"llm_{k}": v for k, v in llm.items()},
            **{f"event_{k}": v for k, v in event.items()},
            **{f"p{j}_{p.kind}_{k}": v for j, step in enumerate(rides) for p in step
               for k, v in p.params.items()},
        }  # fmt: skip
        pending = tuple(tuple((p.kind, tuple(sorted(p.params))) for p in step) for step in rides)
        shape = (tuple(sorted(message)), tuple(sorted(llm)), tuple(sorted(event)), level)
        statement = self._one.get((*shape, pending))
        if statement is None:
            statement = self._one[(*shape, pending)] = answered_in_one(
                *shape, self._probes, pending
            )
        # As in the transaction: a fault here finds nothing of the completion committed.
        self._ctx.faults("complete.before_commit")
        with self._ctx.one_statement() as c:
            return bool(c.execute(statement, params).scalar())

    def _completed_first(
        self,
        req: CompleteRequest,
        turn: TurnRecord,
        values: tuple[dict[str, Any], dict[str, Any]],
        level: str,
    ) -> bool:
        """SQLite: `_in_one` as two statements after a BEGIN IMMEDIATE (the full way takes
        five): the guarded UPDATE (_sql.completed_first), then the turn's rows and the
        run_completed event as one INSERT through the view (migration 0021). False, with
        nothing written, when the UPDATE's guards held it back."""
        update, event = values
        statement = self._first.get(level)
        if statement is None:
            statement = self._first[level] = completed_first(level, self._probes)
        with self._ctx.transaction() as c:
            params = {**update, "answer_sequence": turn.sequence}
            if not rowcount(c.execute(statement, params)):
                return False
            steps = [*riding(req.run_id, turn.pending), self._runs.turn_parts(req.run_id, turn),
                     [Part("event", event)]]  # fmt: skip
            write_rows(self._ctx, c, steps)
            self._ctx.faults("complete.before_commit")
        return True
