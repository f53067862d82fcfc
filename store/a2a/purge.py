"""Purge: removing a run removes its transcript, events, A2A task, journal and push state
(foreign keys ON DELETE CASCADE). Afterwards GetTask answers TaskNotFoundError."""

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, exists, select

from agentrt.contracts.enums import TERMINAL_STATUSES
from agentrt.store.db.a2a_tables import A2ATaskRow
from agentrt.store.db.context import StoreContext, rowcount
from agentrt.store.db.tables import RunRow

BATCH = 500


def purge_runs(ctx: StoreContext, run_ids: Iterable[str]) -> int:
    """Delete these runs (whatever their state) and their tasks; returns runs removed."""
    ids = list(run_ids)
    removed = 0
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        with ctx.sessions.begin() as s:
            # Run rows first, as the completion and the A2A projection lock them (run, then
            # task): deleting the tasks first inverted that order, and PostgreSQL found a
            # deadlock between a purge and the projection of a run that had just ended.
            s.execute(
                select(RunRow.id).where(RunRow.id.in_(chunk)).order_by(RunRow.id).with_for_update()
            )
            # A task whose run never began is not linked yet: remove it by its reservation.
            s.execute(delete(A2ATaskRow).where(A2ATaskRow.workflow_id.in_(chunk)))
            removed += rowcount(s.execute(delete(RunRow).where(RunRow.id.in_(chunk))))
    return removed


def purge_terminal_before(ctx: StoreContext, cutoff: datetime) -> int:
    """Delete settled runs finished before `cutoff`, and tasks whose run never began."""
    terminal = [s.value for s in TERMINAL_STATUSES]
    total = 0
    while True:
        with ctx.sessions() as s:
            ids = list(
                s.scalars(
                    select(RunRow.id)
                    .where(RunRow.status.in_(terminal), RunRow.finished_at < cutoff)
                    .limit(BATCH)
                ).all()
            )
        if not ids:
            break
        total += purge_runs(ctx, ids)
    with ctx.sessions.begin() as s:
        orphan = ~exists().where(RunRow.id == A2ATaskRow.workflow_id)
        s.execute(
            delete(A2ATaskRow).where(
                A2ATaskRow.run_id.is_(None), A2ATaskRow.created_at < cutoff, orphan
            )
        )
    return total
