"""An agent run started as a bare Temporal client starts it: no facade, so no run row and
no status set before the workflow begins."""

import uuid
from typing import Any

from temporalio.client import Client, WorkflowHandle

from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest, RunResult


async def start_raw(
    client: Client, task_queue: str, profile: str, prompt: str
) -> tuple[str, WorkflowHandle[Any, RunResult]]:
    """(run id, handle) of a fresh run; the handle's result is the run's RunResult."""
    run_id = str(uuid.uuid4())
    handle = await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(run_id=run_id, profile=profile, prompt=prompt),
        id=run_id,
        task_queue=task_queue,
        result_type=RunResult,
    )
    return run_id, handle
