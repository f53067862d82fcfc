"""The run's steps, each one activity on the run's context: begin, a model call, a tool call
(a non-idempotent write goes behind its fence), a refused call."""

import functools

from temporalio import workflow
from temporalio.exceptions import ApplicationError, FailureError

from agentrt.workflows import _options as opt
from agentrt.workflows import children, reconciliation, riding, tool_budget, tool_input
from agentrt.workflows._calls import call, call_local, error_type, failure_of
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Route, Stop, route
from agentrt.workflows._refs import BEGIN, MODEL, REFUSE, TOOL
from agentrt.workflows.budget import Ledger, Reservation
from agentrt.workflows.fence import fenced_write
from agentrt.workflows.settle import answer_terms, turn_stop

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.budget import Allowance
    from agentrt.contracts.enums import TerminationReason, ToolEffect
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import idempotency_key
    from agentrt.contracts.messages import ToolCall, Usage
    from agentrt.contracts.plan import ToolPlan
    from agentrt.contracts.run import (
        BeginRequest,
        BeginResult,
        ModelRequest,
        ModelResult,
        RefuseRequest,
        RunRequest,
        ToolCallRequest,
    )
    from agentrt.contracts.turn import TurnEnd, turn_end


async def begin(ctx: RunContext, inp: RunRequest) -> BeginResult:
    """Insert the run row. A cancel that arrives meanwhile waits for it: cut short, the
    activity could still commit a row that nobody settles. The run then takes the
    cancel at its first check and settles CANCELLED like any other."""
    request = BeginRequest(
        run_id=inp.run_id,
        profile=inp.profile,
        prompt=inp.prompt,
        initiator=inp.initiator,
        max_iterations=inp.max_iterations,
        workflow_run_id=workflow.info().run_id,
        budget_cap=inp.budget,
        parent_run_id=parent_of(inp),
    )
    return await shield_until_done(
        call_local(BEGIN, request, opt.local_store_call(), summary=f"begin {inp.profile}")
    )


def parent_of(inp: RunRequest) -> str | None:
    """The run's parent: only the one Temporal says started it as a child workflow. A start
    that names a parent it does not have (a stock client's) is a root run."""
    parent = workflow.info().parent
    if inp.parent_run_id is None or parent is None or parent.workflow_id != inp.parent_run_id:
        return None
    return inp.parent_run_id


async def model(
    ctx: RunContext, round_no: int, seq: int, *, offer_tools: bool
) -> tuple[ModelResult, TurnEnd]:
    """A model call, and how its turn ends the run (contracts.turn.turn_end, the decision
    the activity made on the same terms: on the answer, it completed the run). A turn that
    stops the run raises the Stop."""
    plan = ctx.require_plan()
    ctx.check_cancel()
    terms = answer_terms(ctx, round_no, offer_tools=offer_tools)
    hold = reserve(ctx)
    if hold is not None:
        terms = terms.model_copy(update={"allowance": hold.amount})
    turn = await call(
        MODEL,
        ModelRequest(
            run_id=ctx.run_id,
            privacy=plan.privacy,
            round=round_no,
            sequence=seq,
            offer_tools=offer_tools,
            model=plan.model,
            fallback_model=plan.fallback_model,
            answer=terms,
            max_tokens=plan.max_output_tokens,
            pending=riding.take(ctx),
        ),
        opt.on_queue(opt.model_call(plan.timeouts), plan.model_task_queue),
        summary=f"model {plan.model} round {round_no}",
        fails_as=TerminationReason.PROVIDER_FAILED,
        outage_seconds=plan.timeouts.store_outage_seconds,
    )
    await riding.taken(ctx, turn.pending_written)  # stored with its turn (or alone)
    if turn.over_budget:  # its worst case did not fit: no provider was called
        if hold is not None:
            ctx.ledger.release(hold)
        raise over_budget(turn.reserved, hold.amount if hold is not None else None)
    ctx.spend(hold, turn.usage)
    # The completion the activity made on the answer, if it made one: committed (or its
    # failure reported), so the run ends with it.
    ctx.settled = turn.settled
    end = turn_end(terms, turn)
    blocked = turn_stop(end, turn)
    if blocked is not None:
        raise blocked
    return turn, end


def start_budget(ctx: RunContext) -> None:
    """Open the run's ledger as the loop starts (a later segment's, on its carried spend).
    A run with a budget reserves each model call's worst case first, and a call that does
    not fit is never scheduled: a change of history, asked of Temporal (not `Patches.on`:
    a run of the build before this one, on replay, took the old path)."""
    plan = ctx.require_plan()
    ctx.ledger = Ledger(budget=plan.budget, spent=ctx.state.usage)
    ctx.reserving = plan.budget is not None and workflow.patched(BUDGET_RESERVE)


def reserve(ctx: RunContext) -> Reservation | None:
    """A model call's reservation: all the room left, its allowance (the activity makes
    the call only if its worst case fits). None for a run that does not reserve; a
    Stop when no room is left (another reservation holds it)."""
    if not ctx.reserving:
        return None
    hold = ctx.ledger.reserve_rest()
    if hold is None:
        raise over_budget(None, ctx.ledger.room())
    return hold


def over_budget(worst: Usage | None, room: Allowance | None) -> Stop:
    return Stop(
        TerminationReason.BUDGET_EXHAUSTED,
        error_type=ErrorType.BUDGET_EXHAUSTED,
        worst_case=worst,
        room=room,
    )


async def tool(ctx: RunContext, round_no: int, c: ToolCall, seq: int | None = None) -> None:
    """`seq`: the call's sequence, reserved by a parallel group (workflows/_group.py);
    None takes the next one here, as a turn run one call at a time does."""
    plan = ctx.require_plan()
    ctx.check_cancel()
    kind, effect = route(c, plan)
    if kind is Route.REFUSE:
        await refuse(ctx, round_no, c, f"Tool {c.name!r} is not available to this agent.", seq)
        return
    tool_plan = plan.tool(c.name)
    if kind is Route.DELEGATE and tool_plan is not None:
        seq = ctx.state.take_sequence() if seq is None else seq
        await children.delegate(ctx, round_no, c, seq, tool_plan)
        return
    request = ToolCallRequest(
        run_id=ctx.run_id,
        round=round_no,
        sequence=ctx.state.take_sequence() if seq is None else seq,
        call=c,
        effect=effect,
        idempotency_key=idempotency_key(ctx.run_id, c.call_id),
        privacy=plan.privacy,
        defer=ctx.defer_reads and effect is ToolEffect.READ_ONLY,
    )
    queue = tool_plan.task_queue if tool_plan is not None else None
    hold = tool_budget.reserve(ctx, tool_plan)
    if hold is False:
        await refuse(ctx, round_no, c, tool_budget.NO_ROOM, request.sequence)
        return
    try:
        await _execute(ctx, kind, request, tool_plan, queue)
    finally:
        tool_budget.spent(ctx, hold)


async def _execute(
    ctx: RunContext, kind: Route, request: ToolCallRequest, tool_plan: ToolPlan | None,
    queue: str | None,
) -> None:  # fmt: skip
    """The call of a tool: an activity with retries, or a fenced write."""
    plan, c = ctx.require_plan(), request.call
    if kind is Route.EXECUTE:
        done = await call(
            TOOL,
            request,
            opt.on_queue(opt.tool_call(plan.timeouts), queue),
            summary=f"tool {c.name}",
            fails_as=TerminationReason.TOOL_FAILED,
            outage_seconds=plan.timeouts.store_outage_seconds,
        )
        riding.keep(ctx, done.deferred)
    else:
        probe = tool_plan is not None and tool_plan.reconcile
        asks = plan.on_unknown_outcome == "ask"
        asked = functools.partial(reconciliation.ask, ctx) if asks else None
        await fenced_write(
            request,
            plan.timeouts,
            ctx.check_cancel,
            task_queue=queue,
            reconcile=probe,
            ask=asked,
            answer_input=functools.partial(tool_input.answer, ctx),
            patches=ctx.patches,
            attempt_seconds=tool_plan.attempt_seconds if tool_plan is not None else None,
        )


async def refuse(
    ctx: RunContext, round_no: int, c: ToolCall, reason: str, seq: int | None = None
) -> None:
    await call(
        REFUSE,
        RefuseRequest(
            run_id=ctx.run_id,
            round=round_no,
            sequence=ctx.state.take_sequence() if seq is None else seq,
            call=c,
            reason=reason,
            privacy=ctx.privacy,
        ),
        opt.store_call(),
        summary=f"refuse {c.name}",
    )


# Runs with a budget reserve before each model call (start_budget).
BUDGET_RESERVE = "budget-reserve"

# Begin failures whose message is configuration, never content: shown to the starter.
_SAFE_BEGIN_MESSAGES = frozenset(
    {ErrorType.UNKNOWN_PROFILE.value, ErrorType.ITERATIONS_OVER_CEILING.value}
)


def begin_reason(err: FailureError) -> str:
    cause = failure_of(err)
    kind = error_type(err)
    if isinstance(cause, ApplicationError) and kind in _SAFE_BEGIN_MESSAGES:
        return cause.message
    return kind
