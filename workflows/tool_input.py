"""A write that waits for the operator (a remote agent's `input-required`), the workflow
side. The write's activity found the target waiting for an answer: it emptied the fence
and recorded nothing (activities/fence). The run pauses on the one input pause
(workflows/input_pause.py `await_input`: WAITING_FOR_INPUT, the question in the
INPUT_REQUESTED event, an attested message taken by the `answer` or `submit_input`
update), and the answer is the write's next turn: workflows/fence.py stamps the same call
afresh (its same idempotency key) and the write sends the answer to the same remote task,
as a message whose id is derived from the key and the turn."""

from temporalio import workflow

from agentrt.workflows._context import RunContext
from agentrt.workflows.input_pause import await_input

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.run import ToolAsked, ToolCallRequest, ToolReply


async def answer(ctx: RunContext, write: ToolCallRequest, asked: ToolAsked) -> ToolReply:
    """The operator's answer to `asked`, once on record: the write's next turn."""
    message = await await_input(ctx, write.round, write.call, asked.question)
    return ToolReply(turn=asked.turn + 1, task_id=asked.task_id, text=message.text)
