"""A test-only "version 2" of the agent loop: it emits a timer first, a command version 1
never did, so a version-1 run replayed here would fail with a nondeterminism error."""

from temporalio import workflow

from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.workflows.agent_run import AgentRunWorkflow

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.run import RunRequest, RunResult

V2_MARKER = "v2 loop"


@workflow.defn(name=WORKFLOW_AGENT_RUN)
class AgentRunWorkflowV2(AgentRunWorkflow):
    @workflow.run
    async def run(self, inp: RunRequest) -> RunResult:
        await workflow.sleep(0.001, summary=V2_MARKER)
        return await super().run(inp)
