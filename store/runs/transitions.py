"""The one shape of a status change: a guarded conditional UPDATE of the run row."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.orm import Session

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.messages import Usage
from agentrt.contracts.run import Transition
from agentrt.store.db.context import rowcount, utcnow
from agentrt.store.db.tables import EventRow, RunRow


def move(
    s: Session, run_id: str, *, frm: RunStatus, to: RunStatus, sequence: int, **values: Any
) -> Transition:
    """`guarded_move` with no more conditions than the status."""
    return guarded_move(s, run_id, (), frm=frm, to=to, sequence=sequence, **values)


def guarded_move(
    s: Session,
    run_id: str,
    guard: Sequence[ColumnElement[bool]],
    *,
    frm: RunStatus,
    to: RunStatus,
    sequence: int,
    **values: Any,
) -> Transition:
    """`frm → to` in one conditional UPDATE with a revision bump, where the row also meets
    `guard` (e.g. the fence a person's answer names).

    Not applied, but the run is already in `to` with this step's event at `sequence`: an
    earlier attempt of this very step committed (a retried activity), reported as `to`.
    """
    res = s.execute(
        update(RunRow)
        .where(RunRow.id == run_id, RunRow.status == frm.value, *guard)
        .values(status=to.value, updated_at=utcnow(), revision=RunRow.revision + 1, **values)
    )
    if rowcount(res):
        return Transition(applied=True, status=to)
    current = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
    if current == to.value:
        step = s.scalar(
            select(EventRow.id).where(EventRow.run_id == run_id, EventRow.sequence == sequence)
        )
        if step is not None:
            return Transition(applied=False, status=to)
    return Transition(applied=False, status=None if current is None else RunStatus(current))


def progress(iterations: int, usage: Usage) -> dict[str, Any]:
    """The run row's progress columns: its iterations, token sums and cost (None: a call's
    cost is unknown) so far, what a waiting run shows (the settle writes the final sums)."""
    return {
        "iterations": iterations,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": usage.cost_usd,
    }
