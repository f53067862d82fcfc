"""The view of a run Temporal holds that no worker has begun yet (an accepted start, or a
begun-start still waiting): there is no row, so it is read from the workflow. Its status is
STARTING; its profile, initiator and start time are what the start told Temporal. And the
list of accepted starts still STARTING (`GET /runs?status=STARTING`)."""

from datetime import UTC

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.ids import MEMO_INITIATOR, SA_PROFILE, SA_RUN_STATUS, WORKFLOW_AGENT_RUN
from agentrt.contracts.views import RunView
from agentrt.starter._starting import PROFILE_KEY


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
    initiator = await desc.memo_value(MEMO_INITIATOR, None, type_hint=str)
    return RunView(
        run_id=run_id,
        profile=profile,
        status=RunStatus.STARTING,
        created_at=desc.start_time.astimezone(UTC),
        # A start before the memo was written names nobody: shown to readers of all runs.
        initiator=initiator if isinstance(initiator, str) else "",
    )


# The accepted starts no worker has begun: their status search attribute says STARTING
# until the workflow begins the run and upserts RUNNING.
_STARTING_QUERY = (
    f'WorkflowType="{WORKFLOW_AGENT_RUN}" AND ExecutionStatus="Running" '
    f'AND {SA_RUN_STATUS}="{RunStatus.STARTING.value}"'
)
SCAN_CAP = 1000  # runs looked at for one page, whatever the initiator filter keeps


async def starting_runs(
    client: Client, *, initiator: str | None, profile: str | None, limit: int
) -> list[RunView]:
    """Accepted starts no worker has begun, newest first, from Temporal's visibility (it
    may lag the start by a moment): of `initiator` and `profile` when given."""
    query = _STARTING_QUERY
    if profile is not None:
        if '"' in profile or "\\" in profile:
            return []  # no profile is named so, and it must not reach the query
        query += f' AND {SA_PROFILE}="{profile}"'
    found: list[RunView] = []
    async for wf in client.list_workflows(query, limit=SCAN_CAP, page_size=min(SCAN_CAP, 200)):
        who = await wf.memo_value(MEMO_INITIATOR, None, type_hint=str)
        who = who if isinstance(who, str) else ""
        if initiator is not None and who != initiator:
            continue
        found.append(
            RunView(
                run_id=wf.id,
                profile=wf.typed_search_attributes.get(PROFILE_KEY) or "",
                status=RunStatus.STARTING,
                created_at=wf.start_time.astimezone(UTC),
                initiator=who,
            )
        )
        if len(found) >= limit:
            break
    return found
