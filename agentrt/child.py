"""An agent run as one step of a workflow of yours.

The agent-run workflow runs as a child, so the run is the same durable run with every
guarantee (its fence, approval, budget, store rows and operator views) as one a client
starts. Call it from workflow code:

    result = await run_agent("support", "Refund order 1042", task_queue="agentrt")

The run's id is a uuid made deterministically by the parent (workflow.uuid4): the same on
replay. The parent's close asks the run to cancel rather than terminating it, so a write
in flight settles through the run's own cancel path."""

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest, RunResult


async def run_agent(
    profile: str,
    prompt: str,
    *,
    task_queue: str | None = None,
    initiator: str = "workflow",
    max_iterations: int | None = None,
) -> RunResult:
    """Run `profile` on `prompt` as a child workflow and return how it ended (its answer
    is read from the store, as for any run: `AgentRuntime.result(run_id)`). `task_queue`:
    the agentrt workers' queue (None: the parent's own)."""
    run_id = str(workflow.uuid4())
    request = RunRequest(
        run_id=run_id,
        profile=profile,
        prompt=prompt,
        initiator=initiator,
        max_iterations=max_iterations,
    )
    result: RunResult = await workflow.execute_child_workflow(
        WORKFLOW_AGENT_RUN,
        request,
        id=run_id,
        task_queue=task_queue,
        result_type=RunResult,
        parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
        static_summary=f"agent run ({profile})",
    )
    return result
