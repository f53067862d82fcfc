"""A turn's tool calls, run as one group: reads, idempotent writes and refusals at once (up
to the plan's `max_parallel_tools`), the turn's non-idempotent writes one after another
beside them, each behind its own fence. The fence is one per run (the `pending_*` columns
of the run row): a second write stamped while the first is in flight would be refused.

What stays as with one call at a time:
- each call's sequence is reserved up front, in the order the model issued the calls, so
  its result message and its event land at the same place whatever finishes first: the
  next model call reads the results in issue order and a replay gives the same transcript;
- the next model call waits for every call of the group;
- a cancel stops what has not started, lets what has started settle (its activity is not
  cancelled: the group is shielded), then records each call not run as refused, at its
  sequence, before the run settles CANCELLED;
- a call that fails the run (a Stop, a failed store step) lets the calls already running
  settle and starts no more; the first failure in issue order ends the run.

New in the history's command order, so behind `PARALLEL_TOOLS`: asked only for a turn of
two calls or more in a run whose plan allows more than one at a time, so a run with no
such turn records no marker, and runs recorded before replay one call at a time."""

import asyncio
from enum import Enum

from temporalio import workflow

from agentrt.workflows import _steps as steps
from agentrt.workflows import riding
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Route, route

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.messages import ToolCall

PARALLEL_TOOLS = "parallel-tools"
NOT_RUN = "Not run: the run was cancelled before this call started."


class Fate(Enum):
    WAITING = "waiting"  # for a slot, or (a write) for the write before it
    RUNNING = "running"
    DONE = "done"
    NOT_STARTED = "not_started"  # the group halted (a cancel, a failure) before its turn
    FAILED = "failed"  # raised: a Stop, a failed store step, or a cancel inside its fence


async def run_turn(ctx: RunContext, round_no: int, calls: list[ToolCall]) -> None:
    """Every call of the turn, each recorded at its own sequence, in issue order."""
    plan = ctx.require_plan()
    limit = plan.max_parallel_tools
    # Each child of the turn takes an even share of the budget's room (workflows/children).
    ctx.delegations_left = sum(route(c, plan)[0] is Route.DELEGATE for c in calls)
    # Its reads ride with the next model call when none of its calls can wait long.
    ctx.defer_reads = riding.all_short(ctx, calls)
    try:
        if len(calls) < 2 or limit < 2 or not ctx.patches.on(PARALLEL_TOOLS):
            for c in calls:
                await steps.tool(ctx, round_no, c)
            return
        await ToolGroup(ctx, round_no, calls, limit).run()
    finally:
        ctx.defer_reads = False


class ToolGroup:
    def __init__(self, ctx: RunContext, round_no: int, calls: list[ToolCall], limit: int) -> None:
        self.ctx, self.round_no, self.calls = ctx, round_no, calls
        plan = ctx.require_plan()
        self.fenced = [route(c, plan)[0] is Route.FENCED_WRITE for c in calls]
        self.seqs = [ctx.state.take_sequence() for _ in calls]
        self.fates = [Fate.WAITING] * len(calls)
        self.errors: list[BaseException | None] = [None] * len(calls)
        self.halted = False
        # asyncio's own: deterministic in a workflow (FIFO, on the workflow's event loop).
        self._slots = asyncio.Semaphore(limit)
        self._writes = asyncio.Lock()

    def halt(self) -> None:
        self.halted = True

    async def run(self) -> None:
        units = [asyncio.create_task(self._one(i)) for i in range(len(self.calls))]
        # Shielded: a cancel reaches the group only as `halt`; what runs settles.
        await shield_until_done(asyncio.gather(*units), on_cancel=self.halt)
        if self.halted:
            pairs = zip(self.calls, self.fates, strict=True)
            fates = ", ".join(f"{c.call_id} {f.value}" for c, f in pairs)
            workflow.logger.info("round %d halted: %s", self.round_no, fates)
        failures = [e for e in self.errors if e is not None]
        failed = next((e for e in failures if not isinstance(e, asyncio.CancelledError)), None)
        if failed is not None:
            raise failed
        if failures or self.ctx.cancel_requested():
            await shield_until_done(self._record_not_run())
            raise asyncio.CancelledError()

    async def _one(self, i: int) -> None:
        if not self.fenced[i]:
            await self._in_slot(i)
            return
        async with self._writes:  # one write in flight per run: the run's one fence
            await self._in_slot(i)

    async def _in_slot(self, i: int) -> None:
        async with self._slots:
            if self.halted or self.ctx.cancel_requested():
                self.fates[i] = Fate.NOT_STARTED
                return
            self.fates[i] = Fate.RUNNING
            try:
                await steps.tool(self.ctx, self.round_no, self.calls[i], self.seqs[i])
            except (Exception, asyncio.CancelledError) as exc:  # the SDK's own BaseExceptions pass
                self.fates[i], self.errors[i] = Fate.FAILED, exc
                self.halt()
                return
            self.fates[i] = Fate.DONE

    async def _record_not_run(self) -> None:
        """Each call the cancel kept from starting, as a refused call at its sequence."""
        for i, c in enumerate(self.calls):
            if self.fates[i] is Fate.NOT_STARTED:
                await steps.refuse(self.ctx, self.round_no, c, NOT_RUN, self.seqs[i])
