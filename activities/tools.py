"""Tool activities for reads and idempotent writes, and the refusal of a call."""

import logging
import time
from typing import Any

from temporalio import activity

from agentrt.activities._common import (
    ActivityGroup,
    db,
    fault,
    heartbeats,
    tool_context,
)
from agentrt.activities.ports import (
    FaultHook,
    Tool,
    ToolContext,
    ToolFailedAfterApplying,
    ToolFailure,
    ToolInputError,
    ToolNeedsInput,
    ToolNotApplied,
    ToolResultError,
    no_faults,
)
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.tool_failures import failure_text
from agentrt.contracts.deferred import RecordDeferredRequest
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.ids import ACT_TOOL_EXECUTE, ACT_TOOL_RECORD_DEFERRED, ACT_TOOL_REFUSE
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import RefuseRequest, ToolCallRequest, ToolCallResult
from agentrt.store.steps.tools import ToolStep, ToolStepStore

GENERIC_TOOL_ERROR = "The tool failed. The error was logged; try another approach."
MAX_RESULT_CHARS = 50_000
# The largest read (its sealed message body and event payload, in characters) whose step
# rides with the next write: it passes through history twice (this activity's result and
# the model call's input). A larger one is recorded at once, as before: a long result
# costs a commit, not kilobytes of history per call (a read of up to about 5,500 characters
# at `full` rides).
DEFER_MAX_SEALED = 8_192


def bounded(text: str) -> str:
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + "…[truncated]"


async def call_tool(
    tool: Tool, call: ToolCall, ctx: ToolContext, *, pausable: bool = False
) -> tuple[str, bool]:
    """(content, is_error) for the typed failures whose text is meant for the model, each a
    known outcome: bad arguments and ToolNotApplied (nothing changed), an unusable result
    and ToolFailedAfterApplying (the effect happened). Anything else propagates, and
    ToolNeedsInput too when the caller can pause for it (`pausable`: a fenced write);
    otherwise it is an error result with the question (the target acted: never resent)."""
    try:
        return bounded(await tool(call.arguments, ctx)), False
    except ToolNeedsInput as exc:
        if pausable:
            raise
        return f"{call.name} asks for input, which only a fenced write can wait for: {exc}", True
    except ToolInputError as exc:
        return f"Invalid arguments for {call.name}: {exc}", True
    except ToolResultError as exc:
        return f"{call.name} ran, but its result is unusable: {exc}", True
    except ToolNotApplied as exc:
        # A known outcome (nothing changed): recorded like any result, so a write's fence
        # is cleared and the run goes on.
        reason = exc.reason if isinstance(exc, ToolFailure) else "not_applied"
        activity.logger.info("tool %s failed in run %s: %s", call.name, ctx.run_id, reason)
        return f"{call.name} failed: {exc}", True
    except ToolFailedAfterApplying as exc:
        activity.logger.info("tool %s failed after applying in run %s", call.name, ctx.run_id)
        return f"{call.name} was applied, then failed: {exc}", True


async def invoke(
    tool: Tool,
    call: ToolCall,
    ctx: ToolContext,
    faults: FaultHook = no_faults,
    privacy: str = "metadata",
) -> tuple[str, bool]:
    """Run a tool fail-soft: (content, is_error). Exception text never reaches the model;
    the operator reads its type, its redacted message (at privacy `full` and `redacted`)
    and the tool's frame in one log line (activities/tool_failures.py)."""
    try:
        await fault(faults, "tool.invoke")
        return await call_tool(tool, call, ctx)
    except Exception as exc:
        # INFO (issue 40 item 4): a tool failing is the tool's expected behaviour, not the
        # runtime's fault; the model is told and goes on. One line, no traceback.
        activity.logger.info(
            "tool %s failed in run %s: %s",
            call.name,
            ctx.run_id,
            failure_text(exc, call.arguments, privacy),
            exc_info=activity.logger.isEnabledFor(logging.DEBUG),  # the trace only when asked
        )
        return GENERIC_TOOL_ERROR, True


class ToolActivities(ActivityGroup):
    def __init__(
        self,
        *,
        registry: ToolRegistry,
        steps: ToolStepStore,
        faults: FaultHook = no_faults,
    ) -> None:
        self._registry = registry
        self._steps = steps
        self._faults = faults

    @activity.defn(name=ACT_TOOL_EXECUTE)
    @heartbeats
    async def execute(self, req: ToolCallRequest) -> ToolCallResult:
        """READ_ONLY and IDEMPOTENT_WRITE calls. Non-idempotent writes go through write.execute."""
        call = req.call
        tool = self._registry.get(call.name)
        if tool is None or tool.effect is ToolEffect.NON_IDEMPOTENT_WRITE:
            # Not ours to run here (unknown tool, or a write that needs the fence).
            await self._record(req, req.effect.value, f"Unknown tool {call.name!r}.", True)
            return ToolCallResult(call_id=call.call_id, is_error=True)
        key = req.idempotency_key if req.effect is ToolEffect.IDEMPOTENT_WRITE else None
        if key is not None:
            prior = await db(self._steps.result, key)
            if prior is not None:  # the dedup ledger answers: the effect does not run again
                await self._record(req, req.effect.value, prior.content, prior.is_error,
                                   key=key, extra={"replayed": True})  # fmt: skip
                return ToolCallResult(call_id=call.call_id, is_error=prior.is_error, replayed=True)
        started = time.monotonic()
        ctx = tool_context(req.run_id, call.call_id, req.idempotency_key)
        content, is_error = await invoke(tool, call, ctx, self._faults, req.privacy)
        step = self._step(req, req.effect.value, content, is_error, key=key,
                          duration_ms=(time.monotonic() - started) * 1000)  # fmt: skip
        if req.defer and key is None and tool.effect is ToolEffect.READ_ONLY:
            # Its rows ride with the run's next write (contracts/deferred.py): sealed here,
            # as the store would store them, so history holds no more than the row would.
            deferred = self._steps.deferred(step)
            if len(deferred.body) + len(deferred.payload) <= DEFER_MAX_SEALED:
                await fault(self._faults, "tool.after_defer")
                return ToolCallResult(call_id=call.call_id, is_error=is_error, deferred=deferred)
        await db(self._steps.record, step)
        await fault(self._faults, "tool.after_record")
        return ToolCallResult(call_id=call.call_id, is_error=is_error)

    @activity.defn(name=ACT_TOOL_RECORD_DEFERRED)
    async def record_deferred(self, req: RecordDeferredRequest) -> None:
        """Reads' steps no model call took (the run left its loop first): recorded alone,
        in one write; a step already recorded is not written twice."""
        await db(self._steps.record_deferred, req.run_id, req.steps)

    @activity.defn(name=ACT_TOOL_REFUSE)
    async def refuse(self, req: RefuseRequest) -> ToolCallResult:
        """Record a refusal as the call's result (not offered, denied...): nothing executes."""
        await self._record(req, "REFUSED", req.reason, True, extra={"refused": True})
        return ToolCallResult(call_id=req.call.call_id, is_error=True)

    async def _record(
        self, req: ToolCallRequest | RefuseRequest, effect: str, content: str, is_error: bool,
        **more: Any,
    ) -> None:  # fmt: skip
        """The call's step written now (`more`: `_step`'s keywords)."""
        await db(self._steps.record, self._step(req, effect, content, is_error, **more))

    @staticmethod
    def _step(
        req: ToolCallRequest | RefuseRequest,
        effect: str,
        content: str,
        is_error: bool,
        *,
        key: str | None = None,
        duration_ms: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ToolStep:
        return ToolStep(
            run_id=req.run_id, sequence=req.sequence, round=req.round, call=req.call,
            effect=effect, content=content, is_error=is_error, privacy=req.privacy,
            idempotency_key=key, duration_ms=duration_ms, extra=extra,
        )  # fmt: skip
