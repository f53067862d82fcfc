"""A write that waits for the operator (a remote agent's `input-required`), the workflow
side. The write's activity found the target waiting for an answer: it emptied the fence
and recorded nothing (activities/fence). The run pauses on the one input pause
(workflows/input_pause.py `await_input`: WAITING_FOR_INPUT, the question in the
INPUT_REQUESTED event, an attested message taken by the `answer` or `submit_input`
update), and the answer is the write's next turn: workflows/fence.py stamps the same call
afresh (its same idempotency key) and the write sends the answer to the same remote task,
as a message whose id is derived from the key and the turn.

A run cancelled while it waits tells the target to stop waiting (`write.withdraw`: the
remote task is cancelled), then settles as any cancelled run."""

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import call, error_type
from agentrt.workflows._context import RunContext
from agentrt.workflows._refs import WITHDRAW
from agentrt.workflows.input_pause import await_input

with workflow.unsafe.imports_passed_through():
    from agentrt.activities._shield import shield_until_done
    from agentrt.contracts.reconcile import WithdrawRequest
    from agentrt.contracts.run import ToolAsked, ToolCallRequest, ToolReply

# Asked only when a run is cancelled while a write waits for the operator: runs recorded
# before it (which left the remote task waiting) replay as they were.
WITHDRAW_ON_CANCEL = "write-withdraws-on-cancel"


async def answer(ctx: RunContext, write: ToolCallRequest, asked: ToolAsked) -> ToolReply:
    """The operator's answer to `asked`, once on record: the write's next turn."""
    try:
        message = await await_input(ctx, write.round, write.call, asked.question)
    except asyncio.CancelledError:
        if asked.task_id and workflow.patched(WITHDRAW_ON_CANCEL):
            await _withdraw(ctx, write, asked)
        raise
    return ToolReply(turn=asked.turn + 1, task_id=asked.task_id, text=message.text)


async def _withdraw(ctx: RunContext, write: ToolCallRequest, asked: ToolAsked) -> None:
    """Tell the target its question will not be answered, at best effort: the cancel goes
    on whatever the target says (a remote that is away keeps its task until it expires)."""
    c = write.call
    tool_plan = ctx.require_plan().tool(c.name)
    request = WithdrawRequest(
        run_id=write.run_id, tool=c.name, call_id=c.call_id,
        idempotency_key=write.idempotency_key, task_id=asked.task_id,
    )  # fmt: skip
    queue = tool_plan.task_queue if tool_plan is not None else None
    told = call(WITHDRAW, request, opt.on_queue(opt.withdraw_call(), queue),
                summary=f"withdraw {c.name}")  # fmt: skip
    try:
        # Shielded: a cancel by signal is followed by Temporal's own, which would otherwise
        # cancel this activity before it ran (the settle that follows is shielded alike).
        await shield_until_done(told)
    except ActivityError as err:
        workflow.logger.warning("withdraw %s failed: %s", c.call_id, error_type(err))
