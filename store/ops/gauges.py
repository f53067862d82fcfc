"""Cheap reads behind the metrics: counted from the rows, so right across restarts."""

from prometheus_client import CollectorRegistry
from sqlalchemy import func, select, text

from agentrt.contracts.enums import RunStatus
from agentrt.core.read_gauges import StoreReads, store_gauges
from agentrt.store.db.context import StoreContext, utcnow
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.query import OUTCOME_UNKNOWN


def count_with_status(ctx: StoreContext, status: RunStatus) -> int:
    """One COUNT over the indexed status column."""
    with ctx.reads() as s:
        query = select(func.count()).select_from(RunRow).where(RunRow.status == status.value)
        return int(s.scalar(query) or 0)


def count_outcome_unknown(ctx: StoreContext) -> int:
    """Runs that failed with a write's outcome unknown and still need an operator: the rule
    GET /attention lists them by (store/runs/query.py). A write its probe reconciled (applied
    or not) never makes one: its run goes on."""
    with ctx.reads() as s:
        return int(s.scalar(select(func.count()).select_from(RunRow).where(OUTCOME_UNKNOWN)) or 0)


def oldest_waiting_seconds(
    ctx: StoreContext, status: RunStatus = RunStatus.WAITING_FOR_APPROVAL
) -> float:
    """How long the longest-waiting run in `status` (a wait: for approval, or for an answer
    on a write) has waited (0 when none): the age an on-call engineer alerts on, where a
    count alone cannot tell stuck from busy."""
    with ctx.reads() as s:
        query = select(func.min(RunRow.waiting_since)).where(RunRow.status == status.value)
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
    reconciling = RunStatus.AWAITING_RECONCILIATION
    store_gauges(
        registry,
        StoreReads(
            count_waiting=lambda: count_with_status(ctx, RunStatus.WAITING_FOR_APPROVAL),
            oldest_waiting=lambda: oldest_waiting_seconds(ctx),
            answers=lambda: store_answers(ctx),
            count_reconciling=lambda: count_with_status(ctx, reconciling),
            oldest_reconciling=lambda: oldest_waiting_seconds(ctx, reconciling),
            count_outcome_unknown=lambda: count_outcome_unknown(ctx),
        ),
    )
