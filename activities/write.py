"""The non-idempotent write: claim the fence, run the effect once, record and clear."""

import time

from temporalio import activity

from agentrt.activities._common import (
    ActivityGroup,
    db,
    fatal,
    fault,
    heartbeating,
    is_store_unavailable,
    retried,
    snapshot_of,
    tool_context,
)
from agentrt.activities._shield import shield_until_done
from agentrt.activities.ports import FaultHook, FencePort, RunPort, ToolStepPort, no_faults
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.tools import call_tool
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ErrorType, RunNotFoundError
from agentrt.contracts.ids import ACT_WRITE_EXECUTE
from agentrt.contracts.run import ToolCallRequest, ToolCallResult


class WriteActivities(ActivityGroup):
    def __init__(
        self,
        *,
        registry: ToolRegistry,
        fence: FencePort,
        steps: ToolStepPort,
        runs: RunPort,
        faults: FaultHook = no_faults,
    ) -> None:
        self._registry = registry
        self._fence = fence
        self._steps = steps
        self._runs = runs
        self._faults = faults

    @activity.defn(name=ACT_WRITE_EXECUTE)
    async def execute(self, req: ToolCallRequest) -> ToolCallResult:
        """Scheduled with zero retries. Raises only non-retryable errors the workflow resolves.

        - claim refused (reset, duplicate, cancelled run): FenceRejected, nothing touched;
        - the tool raised ToolInputError or ToolFailure (a known outcome: nothing was sent, or
          its server answered "failed"): recorded as the call's error result, fence cleared;
        - the effect raised, or its step could not be recorded: WriteFailed / AuditFailed,
          the fence stays claimed and the run fails with outcome unknown.
        """
        if req.fence_token is None:
            raise fatal("a non-idempotent write needs a fence token", ErrorType.FENCE_REJECTED)
        try:
            snap = await snapshot_of(self._runs, req.run_id)
        except RunNotFoundError:
            raise fatal("no persisted run: the write is refused", ErrorType.RUN_NOT_FOUND) from None
        privacy = snap.privacy
        # Heartbeats from the start: a dead worker is noticed within the heartbeat timeout,
        # claimed or not, and resolved from the database.
        async with heartbeating():
            await fault(self._faults, "write.before_claim")
            if not await db(self._fence.claim, run_id=req.run_id, token=req.fence_token):
                raise fatal("write fence could not be claimed", ErrorType.FENCE_REJECTED)
            # Once claimed, the write finishes and is recorded even if the run is cancelled
            # meanwhile: the effect is shielded from the activity's cancellation.
            return await shield_until_done(
                self._claimed(req, privacy),
                on_cancel=lambda: activity.logger.info(
                    "run %s cancelled during a claimed write: finishing it", req.run_id
                ),
            )

    async def _claimed(self, req: ToolCallRequest, privacy: str) -> ToolCallResult:
        assert req.fence_token is not None
        await fault(self._faults, "write.after_claim")
        call = req.call
        tool = self._registry.get(call.name)
        started = time.monotonic()
        if tool is None or tool.effect is not ToolEffect.NON_IDEMPOTENT_WRITE:
            content, is_error = f"Unknown tool {call.name!r}.", True
        else:
            ctx = tool_context(req.run_id, call.call_id, req.idempotency_key)
            try:
                # Bad arguments are refused before any effect, by contract; an unusable result
                # comes after a known one; a ToolFailure is a known outcome (not sent, or the
                # server answered "failed"): all are recorded as plain errors.
                content, is_error = await call_tool(tool, call, ctx)
            except Exception as exc:
                activity.logger.warning(
                    "write %s in run %s failed: %s", call.name, req.run_id, type(exc).__name__
                )
                raise fatal(
                    "the write failed; its outcome is unknown", ErrorType.WRITE_FAILED
                ) from None
        await fault(self._faults, "write.after_effect")
        duration_ms = (time.monotonic() - started) * 1000
        try:
            await retried(
                lambda: db(
                    self._steps.record,
                    run_id=req.run_id,
                    sequence=req.sequence,
                    round=req.round,
                    call=call,
                    effect=ToolEffect.NON_IDEMPOTENT_WRITE.value,
                    content=content,
                    is_error=is_error,
                    privacy=privacy,
                    idempotency_key=req.idempotency_key,
                    fence_token=req.fence_token,
                    duration_ms=duration_ms,
                ),
                RECORD_PAUSES,
                is_store_unavailable,
                "recording a write",
            )
        except Exception as exc:
            activity.logger.warning(
                "audit of write %s in run %s failed: %s", call.name, req.run_id, type(exc).__name__
            )
            raise fatal(
                "the write ran but its step could not be recorded", ErrorType.AUDIT_FAILED
            ) from None
        return ToolCallResult(call_id=call.call_id, is_error=is_error)


# The outcome is known once the effect returned: a store that is briefly away (a dropped
# connection, a restart) must not turn it into "outcome unknown". The record is idempotent
# (insert-or-ignore, the fence cleared only for its own token), so it is tried again, for
# about 6 s, while the activity heartbeats; anything else fails at once.
RECORD_PAUSES = (0.2, 0.4, 0.8, 1.6, 3.2)
