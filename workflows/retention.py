"""RetentionWorkflow: one retention pass, started by the `agentrt-retention` Schedule
(`agentrt schedules apply`). Only activities do I/O; this orders them."""

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityConfig

from agentrt.workflows._calls import ActivityRef, call

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.ids import (
        ACT_RETENTION_CANCEL,
        ACT_RETENTION_PURGE,
        ACT_RETENTION_STALE,
        ACT_RETENTION_UNSETTLED,
        WORKFLOW_RETENTION,
    )
    from agentrt.contracts.retention import (
        PurgeRequest,
        PurgeResult,
        RetentionPolicy,
        RetentionReport,
        RunIds,
    )

# The retention activities (activities/retention.py), by their frozen names: their module
# holds the store's side, which workflow code does not import.
STALE = ActivityRef[RetentionPolicy, RunIds](ACT_RETENTION_STALE, RunIds)
CANCEL = ActivityRef[RunIds, None](ACT_RETENTION_CANCEL, type(None))
UNSETTLED = ActivityRef[RunIds, RunIds](ACT_RETENTION_UNSETTLED, RunIds)
PURGE = ActivityRef[PurgeRequest, PurgeResult](ACT_RETENTION_PURGE, PurgeResult)

_CALL: ActivityConfig = {
    "start_to_close_timeout": timedelta(minutes=5),
    "heartbeat_timeout": timedelta(minutes=1),
    "retry_policy": RetryPolicy(maximum_interval=timedelta(seconds=30), maximum_attempts=10),
}
SETTLE_CHECKS, SETTLE_PAUSE = 30, timedelta(seconds=2)
# Checks in a row in which no cancelled run settled: the rest have no worker to settle them
# (their queue is not served), so the pass stops waiting for them. Once a patch: a 0.3.x
# pass may carry its marker, so it stays deprecated (README, "Support window").
STALLED_CHECKS = 5
SETTLE_UNTIL_STALLED = "retention-settle-until-stalled"
MAX_BATCHES = 50  # a pass purges at most this many batches; the next pass goes on


@workflow.defn(name=WORKFLOW_RETENTION)
class RetentionWorkflow:
    @workflow.run
    async def run(self, policy: RetentionPolicy) -> RetentionReport:
        stale = await call(STALE, policy, _CALL, summary="find stale waiting runs")
        if stale.run_ids:
            await call(CANCEL, stale, _CALL, summary="cancel stale runs")
            # Give the cancelled runs their settle (a guarded terminal write) before purging;
            # one that does not settle in time is purged anyway (deleting terminates it).
            await _settle_wait(stale)
        purged, extra = 0, stale.run_ids
        for _ in range(MAX_BATCHES):
            result = await call(
                PURGE,
                PurgeRequest(finished_days=policy.finished_days, run_ids=extra),
                _CALL,
                summary="purge",
            )
            purged, extra = purged + result.purged, []
            if not result.more:
                break
        return RetentionReport(cancelled=len(stale.run_ids), purged=purged)


async def _settle_wait(stale: RunIds) -> None:
    """Wait while the cancelled runs settle: until all have, SETTLE_CHECKS have passed, or
    none has for STALLED_CHECKS checks in a row."""
    unsettled, quiet = len(stale.run_ids), 0
    for _ in range(SETTLE_CHECKS):
        left = await call(UNSETTLED, stale, _CALL, summary="wait for settle")
        if not left.run_ids:
            return
        quiet = quiet + 1 if len(left.run_ids) >= unsettled else 0
        unsettled = len(left.run_ids)
        if quiet >= STALLED_CHECKS:
            workflow.deprecate_patch(SETTLE_UNTIL_STALLED)
            return
        await workflow.sleep(SETTLE_PAUSE)
