"""Cheap reads behind the metrics: counted from the rows, so right across restarts."""

from sqlalchemy import func, select

from agentrt.contracts.enums import RunStatus
from agentrt.store.context import StoreContext
from agentrt.store.rows import RunRow


def count_with_status(ctx: StoreContext, status: RunStatus) -> int:
    """One COUNT over the indexed status column."""
    with ctx.sessions() as s:
        query = select(func.count()).select_from(RunRow).where(RunRow.status == status.value)
        return int(s.scalar(query) or 0)
