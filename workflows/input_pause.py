"""The input pause, the workflow side: pause for the remote user's follow-up input (or an
operator's answer to a write's question) and record it. Its transitions are in
activities/pauses.py; the update that feeds it takes the one path of workflows/answers.py."""

from temporalio import workflow

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext, set_status
from agentrt.workflows._loop import Stop
from agentrt.workflows.a2a import project
from agentrt.workflows.pause_record import enter, pause_fields, progress_fields

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.a2a import InputMessage
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import ACT_RUN_ADD_INPUT, ACT_RUN_AWAIT_INPUT
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.pauses import AddInputRequest, AwaitInputRequest
    from agentrt.contracts.run import Transition

# By their frozen names: activities/pauses.py holds SQL, which workflow code does not import.
AWAIT_INPUT = ActivityRef[AwaitInputRequest, Transition](ACT_RUN_AWAIT_INPUT, Transition)
ADD_INPUT = ActivityRef[AddInputRequest, Transition](ACT_RUN_ADD_INPUT, Transition)


async def await_input(
    ctx: RunContext, round_no: int, write: ToolCall | None = None, question: str | None = None
) -> InputMessage:
    """The model asked the remote user for more, or the write `write` asked the operator
    `question` (workflows/tool_input.py): wait for the follow-up and record it."""
    plan = ctx.require_plan()
    ctx.input.open()
    for_call = None if write is None else write.call_id
    request = AwaitInputRequest(
        round=round_no, question=question, call_id=for_call,
        tool=None if write is None else write.name, **progress_fields(ctx, plan),
    )  # fmt: skip
    await enter(plan, AWAIT_INPUT, request, "wait for input", ctx.input.close)
    set_status(RunStatus.WAITING_FOR_INPUT)
    ctx.details.waiting_for_input(round_no)
    await project(ctx)
    while True:
        await workflow.wait_condition(
            lambda: ctx.input.message is not None or ctx.cancel_requested()
        )
        ctx.check_cancel()
        message = ctx.input.message
        assert message is not None
        added = await call(
            ADD_INPUT,
            AddInputRequest(
                round=round_no, message=message, call_id=for_call, **pause_fields(ctx, plan)
            ),
            opt.store_call(),
            summary="record input",
            fails_as=TerminationReason.INTERNAL_ERROR,
        )
        if added.applied or added.refusal is None:
            break
        # Refused (its attestation does not open): the run waits on for another message.
        # Only runs that met such a message take this path: recorded histories' commands
        # are unchanged.
        ctx.input.reject(message)
        workflow.logger.warning("input refused: %s", added.refusal)
    ctx.input.close(recorded=message if added.applied else None)
    if not added.applied:
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type=ErrorType.INPUT_REFUSED)
    set_status(RunStatus.RUNNING)
    await project(ctx)
    return message
