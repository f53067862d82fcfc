"""The write fence: a non-idempotent write runs at most once.

The workflow stamps the fence with a fresh token (`fence.stamp`, a local activity in the
workflow task that schedules the write: workflows/fence.py), schedules the write once
(`write.execute`: claim the fence with that token, run the tool, record its step and clear
the fence in one statement), and after a failure asks the database what really happened
(`fence.resolve`). The transitions are in `_sql`; `void_unclaimed` is the settle's part.
A write interrupted after its claim is reconciled through its probe, if it has one
(`write.reconcile`, in `reconcile`).
"""

import asyncio
import contextlib
import contextvars
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from agentrt.activities._common import (
    ActivityGroup,
    fatal,
    fault,
    heartbeating,
    is_store_unavailable,
    retried,
    store_work,
    tool_context,
)
from agentrt.activities._shield import shield_until_done
from agentrt.activities.fence import _sql
from agentrt.activities.fence._sql import void_unclaimed
from agentrt.activities.fence.reconcile import ReconcileActivities
from agentrt.activities.live import tool_publisher
from agentrt.activities.ports import FaultHook, Tool, ToolNeedsInput, no_faults
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.tool_failures import failure_text
from agentrt.activities.tools import call_tool
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import (
    ACT_FENCE_RESOLVE,
    ACT_FENCE_STAMP,
    ACT_WRITE_EXECUTE,
    idempotency_key,
)
from agentrt.contracts.run import (
    FenceRequest,
    FenceResult,
    FenceState,
    ToolAsked,
    ToolCallRequest,
    ToolCallResult,
)
from agentrt.store.db.context import StoreContext
from agentrt.store.live.table import LiveStore
from agentrt.store.steps.tools import ToolStep, ToolStepStore

__all__ = ["FenceActivities", "ReconcileActivities", "WriteActivities", "void_unclaimed"]

P = ParamSpec("P")
T = TypeVar("T")


def uncounted() -> None:
    """No metrics: what a fence built without the worker's counters records."""


class FenceActivities(ActivityGroup):
    """Stamp and resolve: sync activities, each one transaction on the worker's executor
    (the stamp one statement when it applies)."""

    def __init__(
        self,
        *,
        ctx: StoreContext,
        faults: FaultHook = no_faults,
        interrupted: Callable[[], None] = uncounted,
    ) -> None:
        self._ctx = ctx
        self._faults = faults
        self._interrupted = interrupted  # a claimed write found with its outcome unknown

    @activity.defn(name=ACT_FENCE_STAMP)
    @store_work
    def stamp(self, req: FenceRequest) -> FenceResult:
        self._faults("fence.before_stamp")
        key = idempotency_key(req.run_id, req.call_id)
        return FenceResult(state=_sql.stamp(self._ctx, req, key))

    @activity.defn(name=ACT_FENCE_RESOLVE)
    @store_work
    def resolve(self, req: FenceRequest) -> FenceResult:
        state = _sql.resolve(self._ctx, req, idempotency_key(req.run_id, req.call_id))
        self._faults("fence.after_resolve")
        if state == FenceState.INTERRUPTED:
            self._interrupted()
            activity.logger.warning(
                "run %s: write %s interrupted after its claim; outcome unknown",
                req.run_id,
                req.call_id,
            )
        return FenceResult(state=state)


class WriteActivities(ActivityGroup):
    """The write itself. Async, because it awaits the tool; its two store steps (the claim,
    then the record with the clear) each take one hop to `executor`, the worker's bounded
    pool (the SDK's activity executor), never the default thread pool."""

    def __init__(
        self,
        *,
        ctx: StoreContext,
        registry: ToolRegistry,
        executor: Executor,
        faults: FaultHook = no_faults,
        claimed: Callable[[], None] = uncounted,
        live: LiveStore | None = None,
    ) -> None:
        self._live = live  # where a tool's streamed output is published
        self._ctx = ctx
        self._steps = ToolStepStore(ctx)
        self._registry = registry
        self._executor = executor
        self._faults = faults
        self._claimed_count = claimed  # a write that claimed its fence

    async def _hop(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn` on the executor, in this activity's context (its logger, its fault hook)."""
        work = functools.partial(store_work(fn), *args, **kwargs)
        run = contextvars.copy_context().run
        return await asyncio.get_running_loop().run_in_executor(self._executor, run, work)

    @activity.defn(name=ACT_WRITE_EXECUTE)
    async def execute(self, req: ToolCallRequest) -> ToolCallResult:
        """Scheduled with zero retries. Raises only non-retryable errors the workflow resolves.

        - claim refused (reset, duplicate, cancelled run): FenceRejected, nothing touched;
          no run row at all: RunNotFound;
        - the tool raised ToolInputError or ToolNotApplied (nothing changed), or
          ToolFailedAfterApplying (the effect happened): a known outcome, recorded as the
          call's error result, fence cleared;
        - the effect raised, or its step could not be recorded: WriteFailed / AuditFailed,
          the fence stays claimed and the run fails with outcome unknown.
        """
        token = req.fence_token
        if token is None:
            raise fatal("a non-idempotent write needs a fence token", ErrorType.FENCE_REJECTED)
        began = time.monotonic()  # a bounded tool's bound counts from here
        # Heartbeats from the start: a dead worker is noticed within the heartbeat timeout,
        # claimed or not, and resolved from the database.
        async with heartbeating():
            refused = await self._hop(self._claim, req.run_id, token)
            if refused is ErrorType.RUN_NOT_FOUND:
                raise fatal("no persisted run: the write is refused", refused)
            if refused is not None:
                raise fatal("write fence could not be claimed", refused)
            # Once claimed, the write finishes and is recorded even if the run is cancelled
            # meanwhile: the effect is shielded from the activity's cancellation.
            return await shield_until_done(
                self._claimed(req, token, began),
                on_cancel=lambda: activity.logger.info(
                    "run %s cancelled during a claimed write: finishing it", req.run_id
                ),
            )

    def _claim(self, run_id: str, token: str) -> ErrorType | None:
        self._faults("write.before_claim")
        refused = _sql.claim(self._ctx, run_id, token)
        if refused is None:
            self._claimed_count()
        return refused

    async def _claimed(self, req: ToolCallRequest, token: str, began: float) -> ToolCallResult:
        await fault(self._faults, "write.after_claim")
        call = req.call
        tool = self._registry.get(call.name)
        started = time.monotonic()
        shown = False
        if tool is None or tool.effect is not ToolEffect.NON_IDEMPOTENT_WRITE:
            content, is_error = f"Unknown tool {call.name!r}.", True
        else:
            try:
                content, is_error, shown = await self._call(req, tool, began)
            except ToolNeedsInput as asked:
                return await self._asked(req, token, asked)
            except Exception as exc:
                failed = "the write failed; its outcome is unknown"
                raise _fatal(req, exc, "write", failed, ErrorType.WRITE_FAILED) from None
        await fault(self._faults, "write.after_effect")
        step = ToolStep(
            run_id=req.run_id,
            sequence=req.sequence,
            round=req.round,
            call=call,
            effect=ToolEffect.NON_IDEMPOTENT_WRITE.value,
            content=content,
            is_error=is_error,
            privacy=req.privacy,  # the run's level, as the workflow's plan holds it
            idempotency_key=req.idempotency_key,
            duration_ms=(time.monotonic() - started) * 1000,
        )
        clear = _sql.clear_part(req.run_id, token)
        await self._stored(
            req, lambda: self._hop(self._steps.record, step, [clear]), "recording a write",
            "the write ran but its step could not be recorded",
        )  # fmt: skip
        if shown and self._live is not None:  # recorded: its live output goes
            with contextlib.suppress(Exception):  # stale live rows cost only space
                await self._hop(self._live.prune, req.run_id, req.sequence)
        return ToolCallResult(call_id=call.call_id, is_error=is_error)

    async def _call(self, req: ToolCallRequest, tool: Tool, began: float) -> tuple[str, bool, bool]:
        """(content, is_error, whether live output was published): the tool's call, its
        text published as it streams (a remote agent's task), where the run's level shows
        it. Bad arguments are refused before any effect, by contract; an unusable result
        comes after a known one; ToolNotApplied and ToolFailedAfterApplying are the
        tool's own word on the outcome: all are recorded as plain errors."""
        call, turn = req.call, 0 if req.reply is None else req.reply.turn
        live = tool_publisher(self._live, req.run_id, req.sequence, req.privacy, turn)
        emit = None if live is None else live.emit
        ctx = tool_context(req.run_id, call.call_id, req.idempotency_key, req.reply, emit)
        try:
            # The tool's own attempt bound, as the run's plan holds it: the workflow asks
            # its probe once that has passed, so the call must not go on past it.
            async with asyncio.timeout(_left(req.attempt_seconds, began)):
                content, is_error = await call_tool(tool, call, ctx, pausable=True)
        finally:
            if live is not None:
                await live.finish()
        return content, is_error, live is not None and live.published

    async def _stored(
        self, req: ToolCallRequest, work: Callable[[], Awaitable[None]], what: str, failed: str
    ) -> None:
        """`work` (a store step after the tool returned: the outcome is known), tried again
        while the store is briefly away; AuditFailed (`failed`) if it cannot be done."""
        try:
            await retried(work, RECORD_PAUSES, is_store_unavailable, what)
        except Exception as exc:
            raise _fatal(req, exc, "audit of write", failed, ErrorType.AUDIT_FAILED) from None

    async def _asked(
        self, req: ToolCallRequest, token: str, asked: ToolNeedsInput
    ) -> ToolCallResult:
        """The target waits for the operator's answer: nothing more happens there until the
        call sends it (a known state, not an unknown outcome). The fence is emptied, no
        step recorded: the workflow pauses the run for input, then stamps the same call
        afresh (its same idempotency key) to send the answer."""
        await self._stored(
            req, lambda: self._hop(_sql.clear, self._ctx, req.run_id, token),
            "clearing a write that waits for input",
            "the write waits for input but its fence could not be cleared",
        )  # fmt: skip
        question = ToolAsked(question=asked.question, task_id=asked.task_id, turn=asked.turn)
        return ToolCallResult(call_id=req.call.call_id, asked=question)


def _left(attempt_seconds: float | None, began: float) -> float | None:
    """What is left of a bounded attempt (None: no bound). None left raises TimeoutError
    before the call: nothing of it runs."""
    if attempt_seconds is None:
        return None
    left = attempt_seconds - (time.monotonic() - began)
    if left <= 0:
        raise TimeoutError("the attempt's bound passed before the call")
    return left


def _fatal(
    req: ToolCallRequest, exc: Exception, what: str, message: str, error: ErrorType
) -> ApplicationError:
    """The non-retryable error a failed write step ends in. The tool's own failure is
    expected (the tool's, not ours): one line as activities/tool_failures.py says (type,
    redacted message, the tool's frame), and BENIGN, so the SDK adds no traceback. The
    audit's is logged by class only (a store error's text may carry SQL or hosts), at
    WARNING: that one is ours; the tool's own failure is INFO (issue 40 item 4)."""
    tools = error is ErrorType.WRITE_FAILED
    cause = failure_text(exc, req.call.arguments, req.privacy) if tools else type(exc).__name__
    level = logging.INFO if tools else logging.WARNING
    activity.logger.log(level, "%s %s in run %s failed: %s", what, req.call.name, req.run_id, cause)
    return fatal(message, error, expected=tools)


# The outcome is known once the effect returned: a store that is briefly away (a dropped
# connection, a restart) must not turn it into "outcome unknown". The record is idempotent
# (insert-or-ignore, the fence cleared only for its own token), so it is tried again, for
# about 6 s, while the activity heartbeats; anything else fails at once.
RECORD_PAUSES = (0.2, 0.4, 0.8, 1.6, 3.2)
