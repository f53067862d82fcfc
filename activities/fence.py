"""Fence activities: stamp the in-flight write before it runs; resolve it after a failure."""

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db, fault
from agentrt.activities.ports import FaultHook, FencePort, no_faults
from agentrt.contracts.ids import ACT_FENCE_RESOLVE, ACT_FENCE_STAMP, idempotency_key
from agentrt.contracts.run import FenceRequest, FenceResult


class FenceActivities(ActivityGroup):
    def __init__(self, *, fence: FencePort, faults: FaultHook = no_faults) -> None:
        self._fence = fence
        self._faults = faults

    @activity.defn(name=ACT_FENCE_STAMP)
    async def stamp(self, req: FenceRequest) -> FenceResult:
        await fault(self._faults, "fence.before_stamp")
        state = await db(
            self._fence.stamp,
            run_id=req.run_id,
            call_id=req.call_id,
            tool=req.tool,
            token=req.token,
            idempotency_key=idempotency_key(req.run_id, req.call_id),
        )
        return FenceResult(state=state)

    @activity.defn(name=ACT_FENCE_RESOLVE)
    async def resolve(self, req: FenceRequest) -> FenceResult:
        state = await db(
            self._fence.resolve,
            run_id=req.run_id,
            call_id=req.call_id,
            token=req.token,
            idempotency_key=idempotency_key(req.run_id, req.call_id),
        )
        if state == "interrupted":
            activity.logger.warning(
                "run %s: write %s interrupted after its claim; outcome unknown",
                req.run_id,
                req.call_id,
            )
        return FenceResult(state=state)
