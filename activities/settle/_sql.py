"""The completion's statements (activities/settle/completion.py runs them): the locked read of the
run row with its answer, the guarded UPDATE, and on PostgreSQL the whole completion of an
answer the model activity has just made as ONE statement."""

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table, and_, bindparam, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import Executable

from agentrt.contracts.enums import TERMINAL_STATUSES, Outcome, RunStatus
from agentrt.contracts.profiles import LEVEL_RANK
from agentrt.store.db.tables import EventRow, MessageRow, RunRow
from agentrt.store.steps.write import insert_returning

NON_TERMINAL = [s.value for s in RunStatus if s not in TERMINAL_STATUSES]

# The run row (locked) and its answer, in one statement: status, ceiling and message body.
COMPLETING = (
    select(RunRow.status, RunRow.snapshot, RunRow.answer_ceiling, MessageRow.body)
    .outerjoin(
        MessageRow,
        and_(MessageRow.run_id == RunRow.id, MessageRow.sequence == bindparam("answer_sequence")),
    )
    .where(RunRow.id == bindparam("run_id"))
    .with_for_update(of=RunRow)
)
# The guarded completion itself (parameter names differ from the columns they set).
COMPLETE = (
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
        output=bindparam("output"),
        finished_at=bindparam("now"),
        updated_at=bindparam("now"),
        revision=RunRow.revision + 1,
    )
    .execution_options(synchronize_session=False)  # the row is read as columns, not loaded
)


@functools.cache
def complete_with_event(event_columns: tuple[str, ...]) -> Executable:
    """PostgreSQL: the guarded completion and its run_completed event as one statement
    (bind names of the event prefixed `event_`), after the row was read and locked."""
    event = insert_returning("event", event_columns, "event_").cte("completed_event")
    done = COMPLETE.returning(RunRow.id).cte("completed_run")
    return select(func.count()).select_from(done).add_cte(event)


def no_stricter_than(level: str) -> list[str]:
    """The tightened ceilings under which the answer level `level` is still the one in force
    (contracts.profiles.stricter)."""
    rank = LEVEL_RANK.get(level, 3)
    return [name for name, r in LEVEL_RANK.items() if r <= rank]


def answered_in_one(
    message_columns: tuple[str, ...],
    llm_columns: tuple[str, ...],
    event_columns: tuple[str, ...],
    ceiling: str,
    probes: Sequence[Any],
    pending: Sequence[Sequence[tuple[str, tuple[str, ...]]]] = (),
) -> Executable:
    """PostgreSQL: the answer's turn (its message, bind names `message_`, and `llm` event,
    `llm_`), the guarded completion and its run_completed event (`event_`), in ONE
    statement, run in autocommit: one round trip where the full way takes five (BEGIN, the
    turn, the locked read, the completion, COMMIT). The answer is the turn's own text, kept
    at `ceiling`, so the UPDATE also guards what that read would have checked:

    - the run is not terminal (the guard every completion has);
    - the answer's message is the one this statement inserted (not one recorded before);
    - the ceiling in force is `ceiling`: no stricter level tightened into the row;
    - no completion hook applies (`probes`, each NULL for a run it does not serve): a
      hook runs inside a transaction, which this statement has none of.

    It completes the run or it changes nothing but the turn's rows (each ignoring a
    duplicate), and the run_completed event is written only from the UPDATE's RETURNING.
    Counts the rows the UPDATE completed (1 or 0); on 0 the caller takes the full way.
    `pending`: the reads that ride with the answer (each step's parts, kind and columns,
    binds `p{step}_{kind}_`), written like the turn's rows, whatever the UPDATE does."""
    message = insert_returning("message", message_columns, "message_").cte("answer_message")
    llm = insert_returning("event", llm_columns, "llm_").cte("answer_llm")
    allowed = no_stricter_than(ceiling)
    done = (
        COMPLETE.where(
            or_(RunRow.answer_ceiling.is_(None), RunRow.answer_ceiling.in_(allowed)),
            exists(select(message.c.run_id)),
            *(probe.is_(None) for probe in probes),
        )
        .returning(RunRow.id)
        .cte("completed_run")
    )
    table: Table = EventRow.__table__  # type: ignore[assignment]
    values = select(*(bindparam(f"event_{c}", type_=table.c[c].type) for c in event_columns))
    completed = (
        postgresql.insert(table)
        .from_select(list(event_columns), values.select_from(done))
        .on_conflict_do_nothing(index_elements=["run_id", "sequence"])
        .returning(table.c.run_id)
        .cte("completed_event")
    )
    rides = [
        insert_returning(kind, columns, f"p{j}_{kind}_").cte(f"pending_{j}_{kind}")
        for j, step in enumerate(pending)
        for kind, columns in step
    ]
    return select(func.count()).select_from(done).add_cte(message, llm, completed, *rides)


def completed_first(ceiling: str, probes: Sequence[Any]) -> Executable:
    """SQLite: the guarded completion of an answer the model activity has just made, run
    first in its transaction, before the answer's turn and the run_completed event are
    written (one INSERT through the view of migration 0021): the guards of
    `answered_in_one`, with "the answer's message is the one this transaction inserts" as
    "no message at the answer's sequence yet" (bind `answer_sequence`). 0 rows: nothing
    written, the full way decides."""
    recorded = exists(
        select(MessageRow.id).where(
            MessageRow.run_id == RunRow.id, MessageRow.sequence == bindparam("answer_sequence")
        )
    )
    allowed = no_stricter_than(ceiling)
    return COMPLETE.where(
        or_(RunRow.answer_ceiling.is_(None), RunRow.answer_ceiling.in_(allowed)),
        ~recorded,
        *(probe.is_(None) for probe in probes),
    )
