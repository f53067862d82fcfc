"""Cheap reads behind the metrics: counted from the rows, so right across restarts."""

from datetime import datetime

from sqlalchemy import func, select

from agentrt.contracts.enums import RunStatus
from agentrt.store.context import StoreContext, as_utc
from agentrt.store.rows import RunRow


def count_with_status(ctx: StoreContext, status: RunStatus) -> int:
    """One COUNT over the indexed status column."""
    with ctx.sessions() as s:
        query = select(func.count()).select_from(RunRow).where(RunRow.status == status.value)
        return int(s.scalar(query) or 0)


def waiting_since(ctx: StoreContext, run_id: str) -> tuple[RunStatus | None, datetime | None]:
    """The run's status and, while it waits, since when (UTC)."""
    with ctx.sessions() as s:
        row = s.execute(
            select(RunRow.status, RunRow.waiting_since).where(RunRow.id == run_id)
        ).first()
    if row is None:
        return None, None
    return RunStatus(row[0]), as_utc(row[1])
