"""The view of a run Temporal holds that no worker has begun yet (an accepted start, or a
begun-start still waiting): there is no row, so it is read from the workflow. Its status is
STARTING; its profile, initiator and start time are what the start told Temporal."""

from datetime import UTC

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.run import RunView
from agentrt.starter._starting import INITIATOR_MEMO, PROFILE_KEY


async def starting_view(client: Client, run_id: str) -> RunView | None:
    """The run as STARTING while its workflow is open and has no row; None when Temporal
    holds no open run of that id (never started, failed to begin, or closed)."""
    try:
        desc = await client.get_workflow_handle(run_id).describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return None
        raise
    profile = desc.typed_search_attributes.get(PROFILE_KEY)
    if desc.status is not WorkflowExecutionStatus.RUNNING or profile is None:
        return None  # closed, or not a run this runtime started
    initiator = await desc.memo_value(INITIATOR_MEMO, None, type_hint=str)
    return RunView(
        run_id=run_id,
        profile=profile,
        status=RunStatus.STARTING,
        created_at=desc.start_time.astimezone(UTC),
        # A start before the memo was written names nobody: shown to readers of all runs.
        initiator=initiator if isinstance(initiator, str) else "",
    )
