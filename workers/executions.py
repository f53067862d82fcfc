"""The retention pass's Temporal side (activities/ports.ExecutionPort) over a client."""

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.approval import CancelRequest
from agentrt.contracts.ids import SIGNAL_CANCEL


class TemporalExecutions:
    def __init__(self, client: Client) -> None:
        self._client = client

    async def cancel(self, workflow_id: str, *, by: str, reason: str) -> None:
        """As `agentrt cancel`: the signal names the actor, the cancel closes it CANCELED."""
        handle = self._client.get_workflow_handle(workflow_id)
        try:
            await handle.signal(SIGNAL_CANCEL, CancelRequest(by=by, reason=reason))
            await handle.cancel(reason=f"cancelled by {by}")
        except RPCError as err:
            if err.status is not RPCStatusCode.NOT_FOUND:  # closed meanwhile: nothing to do
                raise

    async def delete(self, workflow_id: str) -> None:
        """Delete every run of the workflow id, history included (terminates a live one).
        The server removes it asynchronously; gone already is fine."""
        request = DeleteWorkflowExecutionRequest(
            namespace=self._client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id),
        )
        try:
            await self._client.workflow_service.delete_workflow_execution(request)
        except RPCError as err:
            if err.status is not RPCStatusCode.NOT_FOUND:
                raise
