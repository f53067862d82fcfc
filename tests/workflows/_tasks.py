"""An A2A task stored for a run that is yet to start, as the A2A server stores one, and the
run started to serve it, as the A2A server starts one."""

import asyncio
import uuid

from agentrt.contracts.start import StartRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.workers.compose import WorkerResources

FIRST_QUESTION = "which order is late?"


async def new_a2a_task(parts: WorkerResources, owner: str) -> tuple[str, str]:
    """(task id, run id): the task's first message asks FIRST_QUESTION."""
    task_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
    first = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": FIRST_QUESTION}]}
    await asyncio.to_thread(
        lambda: A2AStore(parts.ctx).create(
            task_id=task_id, context_id=str(uuid.uuid4()), workflow_id=run_id, owner=owner,
            profile="auto", answer_level="full", message=first,
        )
    )  # fmt: skip
    return task_id, run_id


async def start_for_task(runtime: AgentRuntime, task_id: str, run_id: str) -> None:
    """Start run `run_id` of profile auto on FIRST_QUESTION, serving A2A task `task_id`."""
    fields = {"profile": "auto", "prompt": FIRST_QUESTION, "run_id": run_id}
    request = StartRequest.checked(runtime.max_prompt_chars, fields)
    await runtime.submit(request, a2a_task_id=task_id)
