"""`AgentRuntime`: the Python API for clients. It starts and waits on workflows and reads
the store; it never runs the agent itself."""

import asyncio
import uuid

from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError

from contracts.errors import (
    ErrorType,
    InvalidRequestError,
    RunNotFoundError,
    UnknownProfileError,
)
from contracts.ids import DEFAULT_TASK_QUEUE, WORKFLOW_AGENT_RUN
from contracts.profiles import MAX_ITERATIONS_CEILING
from contracts.run import EventView, RunInput, RunView
from store.runs import RunStore


class AgentRuntime:
    def __init__(
        self, client: Client, runs: RunStore, task_queue: str = DEFAULT_TASK_QUEUE
    ) -> None:
        self._client = client
        self._runs = runs
        self._task_queue = task_queue

    async def start(
        self,
        profile: str,
        prompt: str,
        *,
        max_iterations: int | None = None,
        initiator: str = "anonymous",
        run_id: str | None = None,
    ) -> str:
        """Start a run; returns its uuid (= the workflow id). Bad input changes nothing."""
        if not profile.strip():
            raise InvalidRequestError("profile is required")
        if not prompt.strip():
            raise InvalidRequestError("prompt is empty")
        if max_iterations is not None and not 1 <= max_iterations <= 1000:
            raise InvalidRequestError(
                f"max_iterations must be between 1 and 1000 (clamped to {MAX_ITERATIONS_CEILING})"
            )
        if run_id is None:
            run_id = str(uuid.uuid4())
        else:
            try:
                run_id = str(uuid.UUID(run_id))
            except ValueError:
                raise InvalidRequestError(f"run id {run_id!r} is not a uuid") from None
        await self._client.start_workflow(
            WORKFLOW_AGENT_RUN,
            RunInput(
                run_id=run_id,
                profile=profile,
                prompt=prompt,
                max_iterations=max_iterations,
                initiator=initiator,
            ),
            id=run_id,
            task_queue=self._task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary=f"agent run ({profile})",
        )
        return run_id

    async def run(
        self,
        profile: str,
        prompt: str,
        *,
        max_iterations: int | None = None,
        initiator: str = "anonymous",
    ) -> RunView:
        """Start a run and wait until it settles. Returns the run whatever its outcome."""
        run_id = await self.start(
            profile, prompt, max_iterations=max_iterations, initiator=initiator
        )
        return await self.result(run_id)

    async def result(self, run_id: str) -> RunView:
        """Wait for the run's workflow to close, then return the stored run."""
        handle = self._client.get_workflow_handle(run_id)
        try:
            await handle.result()
        except WorkflowFailureError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.type == ErrorType.UNKNOWN_PROFILE:
                raise UnknownProfileError(cause.message) from None
            if not (isinstance(cause, ApplicationError) and cause.type == ErrorType.RUN_FAILED):
                view = await self._view(run_id)
                if view is None:
                    raise
        return await self.status(run_id)

    async def status(self, run_id: str) -> RunView:
        view = await self._view(run_id)
        if view is None:
            raise RunNotFoundError(f"no run {run_id}")
        return view

    async def events(self, run_id: str, after_sequence: int = -1) -> list[EventView]:
        if await self._view(run_id) is None:
            raise RunNotFoundError(f"no run {run_id}")
        return await asyncio.to_thread(self._runs.events, run_id, after_sequence)

    async def approve(
        self,
        run_id: str,
        *,
        approved: bool,
        decided_by: str,
        turn_digest: str,
        reason: str | None = None,
    ) -> RunView:
        """Decide the pending turn. Raises a typed ApprovalError (or RunNotFoundError) before
        anything executes; never raises for the run's outcome. Returns the run as it is
        right after the decision was accepted."""
        raise NotImplementedError("approval lands with issue 4")

    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        """Ask the run to cancel (terminal). Raises RunNotFoundError for an unknown run."""
        raise NotImplementedError("cancel lands with issue 4")

    async def inbox(self, limit: int = 50) -> list[RunView]:
        """Runs waiting for approval, oldest first, each with its pending calls."""
        raise NotImplementedError("inbox lands with issue 4")

    async def _view(self, run_id: str) -> RunView | None:
        return await asyncio.to_thread(self._runs.get, run_id)
