"""A delegation: a call of a child agent (a profile of `Profile.agents`, contracts/agents.py)
runs the child as a Temporal child workflow of this run, and its answer is the call's result.

- The child's run id is derived from this run's id and the call's (`child_run_id`), and the
  child is started with REJECT_DUPLICATE: a replayed parent matches its recorded start, and
  a parent reset to before the call, whose start is refused because the child exists,
  waits for that child's end instead (`child.await`). One child per call, ever.
- The parent waits on the child workflow's result: no worker slot is held meanwhile.
- The child keeps its own approvals, four-eyes (its initiator is the parent's) and fence;
  the parent's approval rules applied to the call before it got here (its plan's effect).
- A cancel of the parent reaches the child (a Temporal cancel request; the parent close
  policy REQUEST_CANCEL covers a parent that closes otherwise); the call records how the
  child ended before the parent settles.
- A child that fails fails the call: the model reads an error result, the parent goes on.
- Depth and fan-out are bounded by the plan (AGENTRT_MAX_AGENT_DEPTH,
  AGENTRT_MAX_CHILDREN_PER_RUN): a call past them is refused with its ErrorType.

New in history, so behind CHILD_AGENTS: asked only at a delegation, which only a plan of
this build can hold (ToolPlan.agent), so no earlier run takes it."""

import asyncio
from datetime import timedelta
from typing import Literal

from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
    WorkflowAlreadyStartedError,
)
from temporalio.workflow import ActivityConfig, ParentClosePolicy

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext
from agentrt.workflows.budget import Reservation, spent_all

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.agents import (
        ChildAwaitRequest,
        ChildEnd,
        ChildRecordRequest,
        child_run_id,
        prompt_of,
    )
    from agentrt.contracts.budget import as_budget, share_of
    from agentrt.contracts.enums import RunStatus
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_CHILD_AWAIT, ACT_CHILD_RECORD, WORKFLOW_AGENT_RUN
    from agentrt.contracts.messages import ToolCall, Usage
    from agentrt.contracts.plan import ToolPlan
    from agentrt.contracts.run import RunRequest, RunResult, ToolCallResult

CHILD_AGENTS = "child-agents"
RECORD = ActivityRef[ChildRecordRequest, ToolCallResult](ACT_CHILD_RECORD, ToolCallResult)
AWAIT = ActivityRef[ChildAwaitRequest, ChildEnd](ACT_CHILD_AWAIT, ChildEnd)


async def delegate(ctx: RunContext, round_no: int, c: ToolCall, seq: int, agent: ToolPlan) -> None:
    """Run the child `agent` names for the call `c`, and record its end at `seq`."""
    record = ChildRecordRequest(
        run_id=ctx.run_id,
        privacy=ctx.privacy,
        round=round_no,
        sequence=seq,
        call=c,
        effect=agent.effect,
    )
    refused = _refusal(ctx, c) if ctx.patches.on(CHILD_AGENTS) else _OLD_PATH
    if refused is not None:
        kind, why = refused
        await _record(record.model_copy(update={"error_type": kind, "refusal": why}))
        return
    hold = _share(ctx)
    if hold is False:
        await _record(record.model_copy(update=_NO_ROOM))
        return
    ctx.children += 1
    assert agent.agent is not None
    request = RunRequest(
        run_id=child_run_id(ctx.run_id, c.call_id),
        profile=agent.agent,
        prompt=prompt_of(c) or "",
        initiator=ctx.gate.initiator,  # four-eyes: the parent's initiator may not approve
        parent_run_id=ctx.run_id,
        depth=ctx.depth + 1,
        budget=None if hold is None else as_budget(hold.amount),
    )
    # Shielded: a cancel of the parent reaches the child as a cancel request (below), and
    # the call records how the child ended before the parent settles.
    end = await shield_until_done(_run_child(ctx, request, agent.task_queue))
    if hold is not None:  # the child's spend, or (unknown) all it was granted
        ctx.spend(hold, end.usage or spent_all(hold.amount))
    update = {"child_run_id": request.run_id, "child_status": end.status}
    await _record(record.model_copy(update={**update, "error_type": end.error_type}))
    ctx.check_cancel()


def _share(ctx: RunContext) -> Reservation | Literal[False] | None:
    """A budgeted run's reservation for a child (None: the run does not reserve; False:
    no room): an even share of the room among the turn's children still to start and the
    run's own next model call. The child runs within it (RunRequest.budget), and the
    reservation settles to what the child spent."""
    if not ctx.reserving:
        return None
    parts = max(ctx.delegations_left, 1) + 1
    ctx.delegations_left = max(ctx.delegations_left - 1, 0)
    share = share_of(ctx.ledger.room(), parts)
    hold = None if share is None else ctx.ledger.reserve(share)
    return False if hold is None else hold


_NO_ROOM = {
    "error_type": ErrorType.BUDGET_EXHAUSTED.value,
    "refusal": "Refused: the run's budget has no room left for a child agent.",
}

_OLD_PATH = (ErrorType.INVALID_REQUEST.value, "Child agents are not available to this run.")


def _refusal(ctx: RunContext, c: ToolCall) -> tuple[str, str] | None:
    """Why the call starts no child, as (ErrorType, text for the model), or None."""
    plan = ctx.require_plan()
    if prompt_of(c) is None:
        return ErrorType.INVALID_REQUEST.value, (
            f"Invalid arguments for {c.name}: give the task as a non-empty string 'prompt'."
        )
    if ctx.depth + 1 > plan.max_agent_depth:
        return ErrorType.CHILD_DEPTH_EXCEEDED.value, (
            f"Refused: {c.name} would run at depth {ctx.depth + 1}, past the bound of "
            f"{plan.max_agent_depth} (AGENTRT_MAX_AGENT_DEPTH)."
        )
    if ctx.children >= plan.max_children:
        return ErrorType.CHILD_FAN_OUT_EXCEEDED.value, (
            f"Refused: this run started {ctx.children} child agents, the bound "
            f"(AGENTRT_MAX_CHILDREN_PER_RUN)."
        )
    return None


async def _run_child(ctx: RunContext, request: RunRequest, queue: str | None) -> ChildEnd:
    """Start the child (or find the one this call started before) and wait for its end,
    asking it to cancel once the parent is cancelled."""
    try:
        handle = await workflow.start_child_workflow(
            WORKFLOW_AGENT_RUN,
            request,
            id=request.run_id,
            task_queue=queue,
            result_type=RunResult,
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary=f"child agent {request.profile}",
        )
    except WorkflowAlreadyStartedError:
        # This call's child exists (the parent was reset to before the call): its end,
        # not a second child. An activity waits for it (a reset's rare path).
        return await call(
            AWAIT, ChildAwaitRequest(child_run_id=request.run_id), _awaiting(),
            summary=f"await child {request.profile}",
        )  # fmt: skip
    await workflow.wait_condition(lambda: handle.done() or ctx.cancel_requested())
    if not handle.done():
        handle.cancel()  # the child settles through its own cancel path
    try:
        result = await handle
    except asyncio.CancelledError:
        return ChildEnd(status=RunStatus.CANCELLED.value)
    except ChildWorkflowError as err:
        return child_failure(err)
    return ChildEnd(status=result.status.value, usage=result.usage)


def child_failure(err: FailureError) -> ChildEnd:
    """How a child workflow that did not return ended: cancelled, or failed with a type."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type == ErrorType.RUN_CANCELLED.value:
        return ChildEnd(status=RunStatus.CANCELLED.value)
    if isinstance(cause, ApplicationError):
        return ChildEnd(error_type=cause.type or "ApplicationError", usage=_spent(cause))
    if isinstance(cause, CancelledError):
        return ChildEnd(status=RunStatus.CANCELLED.value)
    return ChildEnd(error_type=type(cause).__name__ if cause is not None else "ChildFailed")


def _spent(failure: ApplicationError) -> Usage | None:
    """A failed child's spend, from the result its settle put in the failure's details."""
    details = failure.details[0] if failure.details else None
    if not isinstance(details, dict):
        return None
    try:
        return RunResult.model_validate(details).usage
    except ValueError:
        return None


def _awaiting() -> ActivityConfig:
    """A child that may wait days for its approvals: a heartbeat bounds a dead worker."""
    return {
        "start_to_close_timeout": timedelta(days=30),
        "heartbeat_timeout": timedelta(seconds=30),
        "retry_policy": RetryPolicy(maximum_interval=timedelta(seconds=30)),
    }


async def _record(request: ChildRecordRequest) -> None:
    await shield_until_done(
        call(RECORD, request, opt.store_call(), summary=f"child result {request.call.name}")
    )
