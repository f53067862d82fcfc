"""Reading a run, for `AgentRuntime` (starter/facade.py): its row in the store, or, while
it has none, what Temporal holds of it (the STARTING view of an accepted start, or the
typed error of a run that never began); waiting for it, following it, and the operators'
lists."""

import asyncio
from collections.abc import AsyncIterator
from functools import partial

from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ErrorType, RunNotBegunError, UnknownProfileError
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.views import EventView, RunView
from agentrt.starter._starting import missing_run
from agentrt.starter._starting_view import starting_view
from agentrt.starter._typed import temporal_errors_typed
from agentrt.starter.client import RuntimeClient
from agentrt.starter.live import follow_store
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore

# `wait` returns a run paused for a person: a decision, or an answer on a write.
_PAUSED = (RunStatus.WAITING_FOR_APPROVAL, RunStatus.AWAITING_RECONCILIATION)


class RunReads(RuntimeClient):
    """The read side of `AgentRuntime`, over its Temporal client and its store."""

    _client: Client
    _runs: RunStore

    @property
    def client(self) -> Client:
        """The Temporal client this runtime starts and signals runs with."""
        return self._client

    async def starting(self, run_id: str) -> RunView | None:
        """The STARTING view of a run Temporal holds that no worker has begun; None once
        its row exists or when Temporal holds no open run (`status` answers either way)."""
        if await self._view(run_id) is not None:
            return None
        return await starting_view(self._client, run_id)

    @temporal_errors_typed
    async def wait(self, run_id: str, poll_seconds: float = 0.1) -> RunView:
        """Wait until the run settles, waits for a decision or for an answer on a write
        (AWAITING_RECONCILIATION); return it.

        Polls the store (and, while no row exists yet, the workflow) rather than racing a
        long poll that would have to be cancelled.
        """
        handle = self._client.get_workflow_handle(run_id)
        while True:
            view = await self._view(run_id)
            if view is not None and view.status in _PAUSED:
                return view
            if view is not None and view.status.terminal:
                return await self.result(run_id)
            if view is None:
                desc = await handle.describe()
                if desc.close_time is not None:
                    return await self.result(run_id)  # raises the typed start error
            await asyncio.sleep(poll_seconds)

    @temporal_errors_typed
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

    @temporal_errors_typed
    async def status(self, run_id: str) -> RunView:
        """The run: its row, or, while Temporal holds it open and no worker has begun it
        (an accepted start), its STARTING view read from Temporal, as `GET /runs/{id}`
        answers. With neither, RunNotFoundError, or RunNotBegunError when its workflow
        closed without beginning it: the message says whether it failed or was withdrawn."""
        view = await self._view(run_id)
        if view is None:
            view = await starting_view(self._client, run_id)
        if view is None:
            # A worker may have begun the run (and its workflow closed) since the first read.
            view = await self._view(run_id)
        if view is None:
            raise await missing_run(self._client, run_id)
        return view

    @temporal_errors_typed
    async def events(self, run_id: str, after_position: int = -1) -> list[EventView]:
        """The run's events committed after `after_position`; none yet while it is
        STARTING."""
        if (await self.status(run_id)).status is RunStatus.STARTING:
            return []
        return await asyncio.to_thread(self._runs.events, run_id, after_position)

    async def follow(self, run_id: str) -> AsyncIterator[EventView | LiveDelta]:
        """Every event and live piece of the run until it ends. A run Temporal holds that
        no worker has begun yet (an accepted start) is waited for while it stays so; typed
        errors for a run that is not there, failed to begin, or was withdrawn."""
        await self._begun(run_id)
        async for item in follow_store(self._runs, LiveStore(self._runs.ctx), run_id):
            yield item

    async def _begun(self, run_id: str, poll_seconds: float = 0.5) -> None:
        # Polled: nothing signals a run's beginning to this process.
        while True:
            try:
                if (await self.status(run_id)).status is not RunStatus.STARTING:
                    return
            except RunNotBegunError as err:
                # Open, not begun, started by another starter (no STARTING view): it may
                # yet begin. Failed to begin, or withdrawn: it never will.
                if not err.pending:
                    raise
            await asyncio.sleep(poll_seconds)

    @temporal_errors_typed
    async def inbox(self, limit: int = 50) -> list[RunView]:
        """Runs waiting for approval, oldest first, each with its pending calls."""
        return await asyncio.to_thread(self._runs.inbox, limit)

    async def attention(self, limit: int = 50) -> list[RunView]:
        query = RunQuery(self._runs.ctx)
        return await asyncio.to_thread(partial(query.attention, visible_to=None, limit=limit))

    async def _view(self, run_id: str) -> RunView | None:
        return await asyncio.to_thread(self._runs.get, run_id)
