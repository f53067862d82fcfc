"""The run's steps, each one activity on the run's context: begin, a model call, a tool call
(a non-idempotent write goes behind its fence), a refused call."""

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from agentrt.workflows import _options as opt
from agentrt.workflows._budget import budget_stop
from agentrt.workflows._calls import call, error_type, store_step
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Route, guardrail_stop, may_pause_for_input, route
from agentrt.workflows.fence import fenced_write

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.activities.model import ModelActivities
    from agentrt.activities.run import RunActivities
    from agentrt.activities.tools import ToolActivities
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import idempotency_key
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.run import (
        AnswerTerms,
        BeginRequest,
        BeginResult,
        ModelRequest,
        ModelResult,
        RefuseRequest,
        RunRequest,
        ToolCallRequest,
    )


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
    )
    return await shield_until_done(
        store_step(
            ctx.local_steps,
            RunActivities.begin,
            request,
            opt.store_call(),
            opt.local_store_call(),
            summary=f"begin {inp.profile}",
        )
    )


async def model(ctx: RunContext, round_no: int, seq: int, *, offer_tools: bool) -> ModelResult:
    plan = ctx.require_plan()
    ctx.check_cancel()
    answer = None
    if ctx.answer_completes:
        # Should this turn be the answer, the activity completes the run on these
        # terms: the completion's sequence is the next one (taken by `complete`).
        answer = AnswerTerms(
            sequence=ctx.state.next_sequence,
            usage=ctx.state.usage,
            pause_for_input=offer_tools and may_pause_for_input(ctx.task_id, round_no, plan),
        )
        ctx.answer_reason = (
            TerminationReason.ANSWERED if offer_tools else TerminationReason.MAX_ITERATIONS
        )
    turn = await call(
        ModelActivities.complete,
        ModelRequest(
            run_id=ctx.run_id,
            round=round_no,
            sequence=seq,
            offer_tools=offer_tools,
            answer=answer,
        ),
        opt.on_queue(opt.model_call(plan.timeouts), plan.model_task_queue),
        summary=f"model {plan.model} round {round_no}",
        fails_as=TerminationReason.PROVIDER_FAILED,
        outage_seconds=plan.timeouts.store_outage_seconds,
    )
    ctx.state.usage = ctx.state.usage + turn.usage
    if turn.settled is not None:
        # The activity found the turn to be the answer (by the checks below) and made
        # the completion: committed, so the run ends with it.
        ctx.settled = turn.settled
        return turn
    blocked = guardrail_stop(turn.guardrail) or budget_stop(ctx.state.usage, plan.budget)
    if blocked is not None:
        raise blocked
    return turn


async def tool(ctx: RunContext, round_no: int, c: ToolCall) -> None:
    plan = ctx.require_plan()
    ctx.check_cancel()
    kind, effect = route(c, plan)
    if kind is Route.REFUSE:
        await refuse(ctx, round_no, c, f"Tool {c.name!r} is not available to this agent.")
        return
    request = ToolCallRequest(
        run_id=ctx.run_id,
        round=round_no,
        sequence=ctx.state.take_sequence(),
        call=c,
        effect=effect,
        idempotency_key=idempotency_key(ctx.run_id, c.call_id),
        privacy=plan.privacy,
    )
    tool_plan = plan.tool(c.name)
    queue = tool_plan.task_queue if tool_plan is not None else None
    if kind is Route.EXECUTE:
        await call(
            ToolActivities.execute,
            request,
            opt.on_queue(opt.tool_call(plan.timeouts), queue),
            summary=f"tool {c.name}",
            fails_as=TerminationReason.TOOL_FAILED,
            outage_seconds=plan.timeouts.store_outage_seconds,
        )
    else:
        await fenced_write(request, plan.timeouts, ctx.check_cancel, task_queue=queue)


async def refuse(ctx: RunContext, round_no: int, c: ToolCall, reason: str) -> None:
    await call(
        ToolActivities.refuse,
        RefuseRequest(
            run_id=ctx.run_id,
            round=round_no,
            sequence=ctx.state.take_sequence(),
            call=c,
            reason=reason,
            privacy=ctx.privacy,
        ),
        opt.store_call(),
        summary=f"refuse {c.name}",
    )


# Begin failures whose message is configuration, never content: shown to the starter.
_SAFE_BEGIN_MESSAGES = frozenset({ErrorType.UNKNOWN_PROFILE.value})


def begin_reason(err: ActivityError) -> str:
    cause = err.cause
    kind = error_type(err)
    if isinstance(cause, ApplicationError) and kind in _SAFE_BEGIN_MESSAGES:
        return cause.message
    return kind
