"""Cheap reads behind the metrics: counted from the rows, so right across restarts."""

from prometheus_client import CollectorRegistry
from sqlalchemy import func, select, text

from agentrt.contracts.enums import RunStatus
from agentrt.core.read_gauges import store_gauges
from agentrt.store.context import StoreContext, utcnow
from agentrt.store.rows import RunRow


def count_with_status(ctx: StoreContext, status: RunStatus) -> int:
    """One COUNT over the indexed status column."""
    with ctx.reads() as s:
        query = select(func.count()).select_from(RunRow).where(RunRow.status == status.value)
        return int(s.scalar(query) or 0)


def oldest_waiting_seconds(ctx: StoreContext) -> float:
    """How long the longest-waiting run has waited for a decision (0 when none waits): the
    age an on-call engineer alerts on, where a count alone cannot tell stuck from busy."""
    with ctx.reads() as s:
        query = select(func.min(RunRow.waiting_since)).where(
            RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value
        )
        since = s.scalar(query)
    if since is None:
        return 0.0
    if since.tzinfo is None:  # SQLite returns naive datetimes; they were written in UTC
        return max(0.0, (utcnow().replace(tzinfo=None) - since).total_seconds())
    return max(0.0, (utcnow() - since).total_seconds())


def store_answers(ctx: StoreContext) -> bool:
    """The store takes a query now (SELECT 1); raises when it does not."""
    with ctx.reads() as s:
        s.execute(text("SELECT 1"))
    return True


def watch_store(registry: CollectorRegistry, ctx: StoreContext) -> None:
    """The store-read gauges (core.metrics.store_gauges) over this store: the workers and
    the API serve the same ones."""
    store_gauges(
        registry,
        lambda: count_with_status(ctx, RunStatus.WAITING_FOR_APPROVAL),
        lambda: oldest_waiting_seconds(ctx),
        lambda: store_answers(ctx),
        lambda: count_with_status(ctx, RunStatus.AWAITING_RECONCILIATION),
    )
