"""`Launcher`: how `AgentRuntime.start` puts a checked run on its task queue, and what it
says when no worker begins it (the queue routing, the poller check, the withdrawal)."""

import asyncio
import contextlib
import logging
from datetime import timedelta

from temporalio.client import (
    Client,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.approval import CancelRequest
from agentrt.contracts.errors import AgentRuntimeError, RunIdTakenError
from agentrt.contracts.ids import UPDATE_BEGUN
from agentrt.contracts.profiles import RegisteredProfile
from agentrt.contracts.run import BegunResult, RunRequest
from agentrt.core.temporal import connection_lost
from agentrt.starter._deciding import cancel_workflow
from agentrt.starter._starting import (
    begin_error,
    lost_while_starting,
    missing_run,
    not_begun_error,
    pollers,
    retrieve_start_error,
    start_operation,
    start_rpc_error,
)

logger = logging.getLogger("agentrt.runtime")

UNPOLLED_WARNING_AFTER = 1.0  # seconds a start waits before it asks whether a worker polls


class Launcher:
    def __init__(
        self,
        client: Client,
        task_queue: str,
        *,
        begin_timeout: float,
    ) -> None:
        self._client = client
        self._task_queue = task_queue
        self._begin_timeout = begin_timeout

    def task_queue_of(self, profile: RegisteredProfile | None) -> str:
        """The profile's own queue as its workers registered it, else this client's: a
        profile no worker registered starts there too, and its worker says it is unknown."""
        if profile is not None and profile.task_queue:
            return profile.task_queue
        return self._task_queue

    async def launch(self, request: RunRequest, queue: str) -> None:
        """Start the run's workflow on `queue` and return once its row exists; the typed
        error of a run that cannot begin, or that no worker began within the bound."""
        start = start_operation(request, queue)
        waiting = asyncio.create_task(self._warn_if_waiting(queue, request.profile))
        try:
            # Update-with-Start: the `begun` update answers once the run row exists, so a run
            # that cannot begin (unknown profile, ...) fails here, not later in Temporal. The
            # SDK re-polls an update no worker has taken without end: the bound is ours.
            async with asyncio.timeout(self._begin_timeout):
                await self._client.execute_update_with_start_workflow(
                    UPDATE_BEGUN,
                    start_workflow_operation=start,
                    # Unique within its workflow, whose id is the run's: the run uuid again
                    # would only repeat 36 bytes in three history events.
                    id=UPDATE_BEGUN,
                    result_type=BegunResult,
                    rpc_timeout=timedelta(seconds=self._begin_timeout),
                )
        except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
            retrieve_start_error(start)
            raise await self._not_begun_in_time(request.run_id, queue) from None
        except WorkflowAlreadyStartedError:
            raise RunIdTakenError(f"run id {request.run_id} is already taken") from None
        except WorkflowUpdateFailedError as err:
            raise begin_error(err.cause, request.profile) from None
        except RPCError as err:
            retrieve_start_error(start)
            config = start_rpc_error(err)
            if config is not None:
                raise config from None
            if connection_lost(err):
                raise lost_while_starting(err, request.run_id) from None
            if err.status is not RPCStatusCode.NOT_FOUND:
                raise
            # Closed before answering.
            raise await missing_run(self._client, request.run_id) from None
        finally:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting

    async def _not_begun_in_time(self, run_id: str, queue: str) -> AgentRuntimeError:
        """No worker began the run within the bound: withdraw it (the same cancel as
        `cancel`), so it does not start behind the caller's back, and say why. When Temporal
        itself does not answer (the SDK retried the start until the bound), say that."""
        polling: int | None
        try:
            polling = await pollers(self._client, queue)
        except RPCError as err:
            if connection_lost(err):
                return lost_while_starting(err, run_id)
            polling = None
        with contextlib.suppress(RPCError):
            await cancel_workflow(
                self._client,
                run_id,
                CancelRequest(
                    by="agentrt",
                    reason=f"withdrawn: not begun within {self._begin_timeout:g}s of its start",
                ),
            )
        return not_begun_error(run_id, queue, polling, self._begin_timeout)

    async def _warn_if_waiting(self, queue: str, profile: str) -> None:
        """Say so when a start is still waiting after a moment and no worker polls its
        queue: the run is visible in Temporal Web (no workflow task started) while `start`
        waits, up to its bound. Asked only then: a worker that has just started may not be
        listed among the queue's pollers yet, though it begins the run at once."""
        await asyncio.sleep(min(UNPOLLED_WARNING_AFTER, self._begin_timeout / 2))
        try:
            polling = await pollers(self._client, queue)
        except RPCError:
            return  # Temporal does not answer: the start itself will say so
        if polling == 0:
            logger.warning(
                "no worker polls task queue %r (profile %r): the run waits in Temporal Web "
                "until one does",
                queue,
                profile,
            )
