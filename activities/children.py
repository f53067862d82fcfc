"""A delegation's activities (workflows/children.py): the child's end recorded as the
parent's tool result, and the end of a child a reset parent had started before."""

import json

from temporalio import activity
from temporalio.client import WorkflowFailureError

from agentrt.activities._common import ActivityGroup, db, fault, heartbeats
from agentrt.activities.ports import FaultHook, no_faults
from agentrt.contracts.agents import ChildAwaitRequest, ChildEnd, ChildRecordRequest
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_CHILD_AWAIT, ACT_CHILD_RECORD
from agentrt.contracts.run import RunResult, ToolCallResult
from agentrt.contracts.views import RunView
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStep, ToolStepStore

NOT_RETAINED = "The agent completed; its answer is not kept at its answer level."


class ChildActivities(ActivityGroup):
    def __init__(
        self, *, runs: RunStore, steps: ToolStepStore, faults: FaultHook = no_faults
    ) -> None:
        self._runs = runs
        self._steps = steps
        self._faults = faults

    @activity.defn(name=ACT_CHILD_RECORD)
    async def record(self, req: ChildRecordRequest) -> ToolCallResult:
        """The call's result at its sequence: the child's answer (its typed output as JSON
        when it has one), or why there is none. Idempotent: a retry adds no row."""
        await fault(self._faults, "child.before_record")
        if req.refusal is not None:
            content, is_error, error_type = req.refusal, True, req.error_type
        else:
            child = await db(self._runs.get, req.child_run_id or "")
            content, is_error, error_type = result_of(req, child)
        extra: dict[str, object] = {"child_run_id": req.child_run_id, "agent": req.call.name}
        if req.child_status is not None:
            extra["child_status"] = req.child_status
        if error_type is not None:
            extra["error_type"] = error_type
        if req.refusal is not None:
            extra["refused"] = True
        step = ToolStep(
            run_id=req.run_id, sequence=req.sequence, round=req.round, call=req.call,
            effect="REFUSED" if req.refusal is not None else req.effect.value,
            content=content, is_error=is_error, privacy=req.privacy, extra=extra,
        )  # fmt: skip
        await db(self._steps.record, step)
        return ToolCallResult(call_id=req.call.call_id, is_error=is_error)

    @activity.defn(name=ACT_CHILD_AWAIT)
    @heartbeats
    async def await_child(self, req: ChildAwaitRequest) -> ChildEnd:
        """The end of a child this call started before (a parent reset to before the call
        found it running or closed): waited on through the worker's client."""
        handle = activity.client().get_workflow_handle(req.child_run_id, result_type=RunResult)
        try:
            result = await handle.result()
        except WorkflowFailureError as err:
            cause = err.cause
            kind = getattr(cause, "type", None) or type(cause).__name__
            if kind == ErrorType.RUN_CANCELLED.value or "Cancel" in type(cause).__name__:
                return ChildEnd(status=RunStatus.CANCELLED.value)
            return ChildEnd(error_type=kind)
        return ChildEnd(status=result.status.value)


def result_of(req: ChildRecordRequest, child: RunView | None) -> tuple[str, bool, str | None]:
    """(content, is_error, error type) of a child's end, as the parent's model reads it."""
    agent = req.call.name
    if child is not None and child.status is RunStatus.COMPLETED:
        if child.output is not None:
            return json.dumps(child.output, sort_keys=True), False, None
        return (child.answer if child.answer is not None else NOT_RETAINED), False, None
    status = req.child_status or (child.status.value if child is not None else None)
    why = child.error_type if child is not None and child.error_type else req.error_type
    text = f"The {agent} agent did not answer: its run ended {status or 'without a status'}"
    if why:
        text += f" ({why})"
    return text + ".", True, ErrorType.CHILD_FAILED.value
