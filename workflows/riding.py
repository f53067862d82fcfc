"""Reads whose steps ride with the run's next write (issue 45; contracts/deferred.py).

A READ_ONLY call's step is not written by its activity: its rows come back sealed, the
workflow keeps them (`RunContext.deferred`), and the next model call reads them as part of
its transcript and writes them in its turn's own commit. A read costs no commit of its own.

- Only a round whose calls are all short defers (reads, idempotent writes, refusals): a
  round with a fenced write or a child agent, which can wait for hours, records its reads
  at once, so the timeline never lags behind a long wait.
- Every way out of the loop other than a model call (a stop, a cancel, a settle, a
  continue-as-new) records them first, alone (`flush`): no read's step is ever lost.
- No patch: the commands are the same (the same tool activity, then the model call); what
  changes is in their payloads, and a recorded history's results carry no rows, which reads
  as "recorded by the activity" (so an old history replays as it ran). `flush` schedules
  an activity only for rows a result of this build returned.
"""

from temporalio import workflow

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Route, route

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.deferred import DeferredStep, RecordDeferredRequest
    from agentrt.contracts.ids import ACT_TOOL_RECORD_DEFERRED
    from agentrt.contracts.messages import ToolCall

RECORD_DEFERRED = ActivityRef[RecordDeferredRequest, None](ACT_TOOL_RECORD_DEFERRED, type(None))

# The routes a round may hold and still defer its reads: none can wait long.
_SHORT = frozenset({Route.EXECUTE, Route.REFUSE})


def all_short(ctx: RunContext, calls: list[ToolCall]) -> bool:
    """Whether the round's reads may ride with the next write: no call of it is a fenced
    write or a child agent."""
    plan = ctx.require_plan()
    return all(route(c, plan)[0] in _SHORT for c in calls)


def keep(ctx: RunContext, step: DeferredStep | None) -> None:
    """A deferred read's rows, as its activity returned them (None: it recorded them)."""
    if step is not None:
        ctx.deferred.append(step)


def take(ctx: RunContext) -> list[DeferredStep]:
    """The rows to ride with the next model call, in sequence order (kept until it returns:
    a call that fails leaves them to `flush`)."""
    return sorted(ctx.deferred, key=lambda s: s.sequence)


async def taken(ctx: RunContext, written: int) -> None:
    """The model call that took the reads returned, saying how many it stored: all of
    them, or (a model worker of an earlier build, in a rolling upgrade) none, which are
    recorded here then."""
    if written < len(ctx.deferred):
        await flush(ctx)
    ctx.deferred.clear()


async def flush(ctx: RunContext) -> None:
    """Record the reads no model call took, alone, before the run leaves its loop. Nothing
    to record schedules nothing."""
    if not ctx.deferred:
        return
    steps = take(ctx)
    await call(
        RECORD_DEFERRED,
        RecordDeferredRequest(run_id=ctx.run_id, steps=steps),
        opt.settle_call(),  # retried until the store takes it, as the settle that follows
        summary=f"record {len(steps)} read(s)",
    )
    ctx.deferred.clear()
