"""A run started around our clients (the stock `temporal` CLI, a client without payload
keys) whose start input is plaintext, at workers with payload keys: ended, and nothing of
it left in Temporal (issue 41, L9).

Our clients refuse such a start before a workflow exists (starter/_starting.py:
payload_key_mismatch). One that comes round them used to stay Running for ever: its first
workflow task failed every 10 s on the refused input, its prompt in the clear in history,
out of retention's reach (retention purges runs it knows from the database; this one never
began). Now the worker's codec tells `PlaintextStarts` of each workflow a plaintext (or
another run's) payload came to (core/codec.py `on_plaintext`), and it looks at that
workflow's history: if the start input itself is not ours and the run never began (no
workflow task ever completed), the execution is deleted, which terminates it and removes
its history. A plaintext signal to a run that began is dropped as before and changes
nothing else: the run's own start is ciphertext."""

import asyncio
import logging
from collections import OrderedDict

from temporalio.api.common.v1 import Payload, WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import (
    DeleteWorkflowExecutionRequest,
    DescribeWorkflowExecutionRequest,
    GetWorkflowExecutionHistoryRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError

from agentrt.core.codec import ENCODING, bound_run, same_run

logger = logging.getLogger(__name__)
# How many workflow ids are remembered as checked: a burst of forged signals to one run
# costs one history read.
_REMEMBERED = 1024
# The first events of a history: the start, then its first workflow tasks.
_FIRST_EVENTS = 20


class PlaintextStarts:
    """The worker's watch for plaintext starts (one per worker client)."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._checked: OrderedDict[str, None] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def heard(self, workflow_id: str) -> None:
        """Called by the codec, on the worker's event loop, for each refused payload."""
        if workflow_id in self._checked:
            return
        self._checked[workflow_id] = None
        while len(self._checked) > _REMEMBERED:
            self._checked.popitem(last=False)
        task = asyncio.get_running_loop().create_task(self._check(workflow_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _check(self, workflow_id: str) -> None:
        try:
            await self.end_if_plaintext_start(workflow_id)
        except RPCError as exc:  # Temporal away: the next refused payload asks again
            self._checked.pop(workflow_id, None)
            logger.warning("could not check workflow %s's start: %s", workflow_id, exc.message)

    async def end_if_plaintext_start(self, workflow_id: str) -> bool:
        """Delete `workflow_id`'s execution if its start input is not a payload of ours for
        it and it never began; True if it did."""
        namespace, service = self._client.namespace, self._client.workflow_service
        described = await service.describe_workflow_execution(
            DescribeWorkflowExecutionRequest(
                namespace=namespace, execution=WorkflowExecution(workflow_id=workflow_id)
            )
        )
        execution = described.workflow_execution_info.execution  # this run, exactly
        history = await service.get_workflow_execution_history(
            GetWorkflowExecutionHistoryRequest(
                namespace=namespace, execution=execution, maximum_page_size=_FIRST_EVENTS
            )
        )
        events = list(history.history.events)
        if not events or events[0].event_type != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            return False
        began = any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED for e in events)
        start = events[0].workflow_execution_started_event_attributes
        if began or all(_ours(p, workflow_id) for p in start.input.payloads):
            return False
        await service.delete_workflow_execution(
            DeleteWorkflowExecutionRequest(namespace=namespace, workflow_execution=execution)
        )
        logger.warning(
            "deleted workflow %s: its start input was not encrypted for it (a start from a "
            "client without these payload keys); nothing of it stays in Temporal",
            workflow_id,
        )
        return True


def _ours(payload: Payload, workflow_id: str) -> bool:
    if payload.metadata.get("encoding") != ENCODING:
        return False
    bound = bound_run(payload)
    return bound is None or same_run(bound, workflow_id)
