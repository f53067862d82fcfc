"""What the retention pass reads and removes (see activities/retention.py)."""

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select

from agentrt.contracts.enums import TERMINAL_STATUSES, RunStatus
from agentrt.store.a2a.purge import purge_runs
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import RunRow

WAITING = [RunStatus.WAITING_FOR_APPROVAL.value, RunStatus.WAITING_FOR_INPUT.value]
TERMINAL = [s.value for s in TERMINAL_STATUSES]


class RetentionStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def waiting_before(self, cutoff: datetime, limit: int) -> list[str]:
        """Runs waiting for a decision or an input since before `cutoff`."""
        with self._ctx.sessions() as s:
            query = select(RunRow.id).where(
                RunRow.status.in_(WAITING), RunRow.waiting_since < cutoff
            )
            return list(s.scalars(query.order_by(RunRow.waiting_since).limit(limit)))

    def finished_before(self, cutoff: datetime, limit: int) -> list[str]:
        with self._ctx.sessions() as s:
            query = select(RunRow.id).where(
                RunRow.status.in_(TERMINAL), RunRow.finished_at < cutoff
            )
            return list(s.scalars(query.order_by(RunRow.finished_at).limit(limit)))

    def unsettled(self, run_ids: Iterable[str]) -> list[str]:
        ids = list(run_ids)
        if not ids:
            return []
        with self._ctx.sessions() as s:
            query = select(RunRow.id).where(RunRow.id.in_(ids), RunRow.status.not_in(TERMINAL))
            return list(s.scalars(query))

    def purge(self, run_ids: Iterable[str]) -> int:
        """Rows, transcript, events, A2A task, journal and push state (cascades)."""
        return purge_runs(self._ctx, run_ids)
