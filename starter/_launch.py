"""`Launcher`: how `AgentRuntime.start` puts a checked run on its task queue, and what it
says when no worker begins it (the queue routing, the poller check, the withdrawal); or,
for an accepted start, only hands it to Temporal."""

import asyncio
import contextlib
import logging
import uuid
from datetime import timedelta

from temporalio.client import (
    Client,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.approval import CancelRequest
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import AgentRuntimeError, NoWorkerError, RunIdTakenError
from agentrt.contracts.ids import UPDATE_BEGUN, WORKFLOW_AGENT_RUN
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.run import BegunResult, RunRequest
from agentrt.core.temporal import connection_lost
from agentrt.starter._deciding import cancel_workflow
from agentrt.starter._starting import (
    begin_error,
    lost_while_starting,
    missing_run,
    retrieve_start_error,
    start_operation,
    start_options,
    start_rpc_error,
)
from agentrt.starter._withdrawal import (
    not_begun_error,
    recent_pollers,
    withdrawal_cause,
    withdrawn,
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
        # The starts this process is waiting on, by run id: a start of the same run id that
        # Temporal turns away meanwhile (it holds the run) waits for the one whose run it
        # is to have begun or withdrawn it before it answers (`withdrawal`), so the two
        # cannot answer differently.
        self._in_flight: dict[str, set[asyncio.Event]] = {}

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
        settled = asyncio.Event()
        self._in_flight.setdefault(request.run_id, set()).add(settled)
        try:
            # Update-with-Start: the `begun` update answers once the run row exists, so a run
            # that cannot begin (unknown profile, ...) fails here, not later in Temporal. The
            # SDK re-polls an update no worker has taken without end: the bound is ours.
            async with asyncio.timeout(self._begin_timeout):
                await self._client.execute_update_with_start_workflow(
                    UPDATE_BEGUN,
                    start_workflow_operation=start,
                    # Unique to this send: a send of the same start again must not attach to
                    # the first's update (Temporal dedupes updates by id): it would answer
                    # "begun" when a worker came, while the first withdraws the run. It
                    # gets WorkflowAlreadyStartedError instead, and reads the withdrawal.
                    id=f"{UPDATE_BEGUN}-{uuid.uuid4().hex[:8]}",
                    result_type=BegunResult,
                    rpc_timeout=timedelta(seconds=self._begin_timeout),
                )
        except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
            await retrieve_start_error(start)
            raise await self._not_begun_in_time(request.run_id, queue) from None
        except WorkflowAlreadyStartedError:
            await retrieve_start_error(start)
            self._settle(request.run_id, settled)  # not this one's run: others wait not on it
            raise await self._taken(request.run_id) from None
        except WorkflowUpdateFailedError as err:
            raise begin_error(err.cause, request.profile) from None
        except RPCError as err:
            await retrieve_start_error(start)
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
            self._settle(request.run_id, settled)
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting

    async def accept(self, request: RunRequest, queue: str) -> None:
        """Hand the run to Temporal and return once it holds it (status STARTING): no wait
        for a worker, and no withdrawal; the run begins whenever a worker takes it."""
        try:
            await self._client.start_workflow(
                WORKFLOW_AGENT_RUN, request, **start_options(request, queue, RunStatus.STARTING)
            )
        except WorkflowAlreadyStartedError:
            raise await self._taken(request.run_id) from None
        except RPCError as err:
            config = start_rpc_error(err)
            if config is not None:
                raise config from None
            if connection_lost(err):
                raise lost_while_starting(err, request.run_id) from None
            raise

    def _settle(self, run_id: str, settled: asyncio.Event) -> None:
        waiting = self._in_flight.get(run_id, set())
        waiting.discard(settled)
        if not waiting:
            self._in_flight.pop(run_id, None)
        settled.set()

    async def withdrawal(self, run_id: str) -> NoWorkerError | None:
        """The error a start of `run_id` was withdrawn with (the answer to every send of it
        again), once the starts of it in flight here have begun or withdrawn it; None if
        not withdrawn."""
        waiting = list(self._in_flight.get(run_id, ()))
        if waiting:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._begin_timeout + 10):
                    await asyncio.gather(*(e.wait() for e in waiting))
        return await withdrawn(self._client, run_id)

    async def _taken(self, run_id: str) -> AgentRuntimeError:
        """A start of a run id Temporal holds: the withdrawal's own error if that run was
        withdrawn, else RunIdTakenError."""
        return await self.withdrawal(run_id) or RunIdTakenError(f"run id {run_id} is already taken")

    async def _not_begun_in_time(self, run_id: str, queue: str) -> AgentRuntimeError:
        """No worker began the run within the bound: withdraw it (the same cancel as
        `cancel`), so it does not start behind the caller's back, and say why. When Temporal
        itself does not answer (the SDK retried the start until the bound), say that."""
        polling: int | None
        for attempt in range(2):
            try:
                polling = await recent_pollers(self._client, queue, self._begin_timeout)
                break
            except RPCError as err:
                polling = None
                if not connection_lost(err):
                    break
                if attempt:  # asked twice: Temporal is away
                    return lost_while_starting(err, run_id)
                # Once more: a loaded dev server answered one describe CANCELLED ("operation
                # was canceled") while it served everything else (CI, 2026-12-05).
                await asyncio.sleep(0.2)
        error = not_begun_error(run_id, queue, polling, self._begin_timeout)
        with contextlib.suppress(RPCError):
            await cancel_workflow(
                self._client,
                run_id,
                CancelRequest(
                    by="agentrt",
                    reason=f"withdrawn: not begun within {self._begin_timeout:g}s of its start",
                ),
                cause=withdrawal_cause(error),
            )
        return error

    async def _warn_if_waiting(self, queue: str, profile: str) -> None:
        """Say so when a start is still waiting after a moment and no worker polls its
        queue: the run is visible in Temporal Web (no workflow task started) while `start`
        waits, up to its bound. Asked only then: a worker that has just started may not be
        listed among the queue's pollers yet, though it begins the run at once."""
        await asyncio.sleep(min(UNPOLLED_WARNING_AFTER, self._begin_timeout / 2))
        try:
            polling = await recent_pollers(self._client, queue, UNPOLLED_WARNING_AFTER)
        except RPCError:
            return  # Temporal does not answer: the start itself will say so
        if polling == 0:
            logger.warning(
                "no worker polls task queue %r (profile %r): the run waits in Temporal Web "
                "until one does",
                queue,
                profile,
            )
