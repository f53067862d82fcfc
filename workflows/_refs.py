"""The agent run's step activities, by their frozen names: begin, a model call, a tool call,
a refused call, the fence's stamp, resolve, write, probe and withdraw, and a person's
answer on an interrupted write (the wait and the record). Their modules hold SQL
(the model activity's the completion's, as it completes the run on its answer; the fence's
in activities/fence), which workflow code never imports."""

from temporalio import workflow

from agentrt.workflows._calls import ActivityRef

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.ids import (
        ACT_FENCE_RESOLVE,
        ACT_FENCE_STAMP,
        ACT_MODEL_COMPLETE,
        ACT_RUN_AWAIT_RECONCILE,
        ACT_RUN_BEGIN,
        ACT_RUN_RECONCILED,
        ACT_TOOL_EXECUTE,
        ACT_TOOL_REFUSE,
        ACT_WRITE_EXECUTE,
        ACT_WRITE_RECONCILE,
        ACT_WRITE_WITHDRAW,
    )
    from agentrt.contracts.reconcile import ReconcileResult, WithdrawRequest
    from agentrt.contracts.reconcile_answer import AwaitReconcileRequest, ReconciledRequest
    from agentrt.contracts.run import (
        BeginRequest,
        BeginResult,
        FenceRequest,
        FenceResult,
        ModelRequest,
        ModelResult,
        RefuseRequest,
        ToolCallRequest,
        ToolCallResult,
        Transition,
    )

# The run's own steps (workflows/_steps.py).
BEGIN = ActivityRef[BeginRequest, BeginResult](ACT_RUN_BEGIN, BeginResult)
MODEL = ActivityRef[ModelRequest, ModelResult](ACT_MODEL_COMPLETE, ModelResult)
TOOL = ActivityRef[ToolCallRequest, ToolCallResult](ACT_TOOL_EXECUTE, ToolCallResult)
REFUSE = ActivityRef[RefuseRequest, ToolCallResult](ACT_TOOL_REFUSE, ToolCallResult)
# A non-idempotent write's, behind its fence (workflows/fence.py).
STAMP = ActivityRef[FenceRequest, FenceResult](ACT_FENCE_STAMP, FenceResult)
RESOLVE = ActivityRef[FenceRequest, FenceResult](ACT_FENCE_RESOLVE, FenceResult)
WRITE = ActivityRef[ToolCallRequest, ToolCallResult](ACT_WRITE_EXECUTE, ToolCallResult)
PROBE = ActivityRef[ToolCallRequest, ReconcileResult](ACT_WRITE_RECONCILE, ReconcileResult)
# A write waiting for the operator's answer, its run cancelled (workflows/tool_input.py).
WITHDRAW = ActivityRef[WithdrawRequest, bool](ACT_WRITE_WITHDRAW, bool)
# A person's answer on an interrupted write (workflows/reconciliation.py).
AWAIT_ANSWER = ActivityRef[AwaitReconcileRequest, Transition](ACT_RUN_AWAIT_RECONCILE, Transition)
RECORD_ANSWER = ActivityRef[ReconciledRequest, Transition](ACT_RUN_RECONCILED, Transition)
