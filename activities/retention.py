"""Retention activities: find runs past their window, cancel the waiting ones, and purge
(workflow executions first, then the rows with their A2A tasks and journals)."""

from datetime import UTC, datetime, timedelta

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db
from agentrt.activities.ports import ExecutionPort
from agentrt.contracts.ids import (
    ACT_RETENTION_CANCEL,
    ACT_RETENTION_PURGE,
    ACT_RETENTION_STALE,
    ACT_RETENTION_UNSETTLED,
)
from agentrt.contracts.retention import (
    PURGE_BATCH,
    PurgeRequest,
    PurgeResult,
    RetentionPolicy,
    RunIds,
)
from agentrt.store.ops.retention import RetentionStore

RETENTION_ACTOR = "retention"


class RetentionActivities(ActivityGroup):
    def __init__(self, *, store: RetentionStore, executions: ExecutionPort) -> None:
        self._store = store
        self._executions = executions

    @staticmethod
    def _cutoff(days: float) -> datetime:
        return datetime.now(UTC) - timedelta(days=days)

    @activity.defn(name=ACT_RETENTION_STALE)
    async def stale_waiting(self, policy: RetentionPolicy) -> RunIds:
        cutoff = self._cutoff(policy.waiting_days)
        return RunIds(run_ids=await db(self._store.waiting_before, cutoff, PURGE_BATCH))

    @activity.defn(name=ACT_RETENTION_CANCEL)
    async def cancel(self, ids: RunIds) -> None:
        for run_id in ids.run_ids:
            await self._executions.cancel(
                run_id, by=RETENTION_ACTOR, reason="waited past the retention window"
            )
        if ids.run_ids:
            activity.logger.info("retention cancelled %d waiting run(s)", len(ids.run_ids))

    @activity.defn(name=ACT_RETENTION_UNSETTLED)
    async def unsettled(self, ids: RunIds) -> RunIds:
        return RunIds(run_ids=await db(self._store.unsettled, ids.run_ids))

    @activity.defn(name=ACT_RETENTION_PURGE)
    async def purge(self, req: PurgeRequest) -> PurgeResult:
        finished = await db(
            self._store.finished_before, self._cutoff(req.finished_days), PURGE_BATCH
        )
        ids = list(dict.fromkeys([*req.run_ids, *finished]))
        # Executions first: a retry after a failure here still finds the rows, so no
        # execution outlives its run. Deleting one that still runs terminates it.
        for run_id in ids:
            await self._executions.delete(run_id)
            activity.heartbeat()
        purged = await db(self._store.purge, ids)
        if purged:
            activity.logger.info("retention purged %d run(s)", purged)
        return PurgeResult(purged=purged, more=len(finished) >= PURGE_BATCH)
