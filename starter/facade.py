"""`AgentRuntime`: the Python API for clients. It starts and waits on workflows and reads
the store; it never runs the agent itself."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from functools import partial
from types import TracebackType
from typing import Self

from sqlalchemy import Engine
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.approval import ApprovalDecision, DecisionRefusal
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    ErrorType,
    NoWorkerError,
    RunNotAwaitingApprovalError,
    RunNotAwaitingReconciliationError,
    RunNotBegunError,
    UnknownProfileError,
)
from agentrt.contracts.ids import DEFAULT_TASK_QUEUE, QUERY_REFUSED_DECISIONS
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING, RegisteredProfile
from agentrt.contracts.reconcile_answer import ReconcileAnswer
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS
from agentrt.contracts.start import StartRequest, StartWait
from agentrt.contracts.views import EventView, RunView
from agentrt.core.settings import Settings
from agentrt.starter._connecting import open_deployment
from agentrt.starter._deciding import (
    cancel_workflow,
    checked_cancel,
    send_decision,
)
from agentrt.starter._launch import Launcher
from agentrt.starter._reconciling import send_answer
from agentrt.starter._starting import missing_run, payload_keys_required, unregistered
from agentrt.starter._starting_view import starting_view
from agentrt.starter._typed import temporal_errors_typed
from agentrt.starter.client import RuntimeClient
from agentrt.starter.live import follow_store
from agentrt.store.live import LiveStore
from agentrt.store.profile_registry import ProfileRegistry
from agentrt.store.run_query import RunQuery
from agentrt.store.runs import RunStore
from agentrt.store.sealing import Sealer

DEFAULT_BEGIN_TIMEOUT = 30.0  # seconds; a polling worker begins a run within moments
# `wait` returns a run paused for a person: a decision, or an answer on a write.
_PAUSED = (RunStatus.WAITING_FOR_APPROVAL, RunStatus.AWAITING_RECONCILIATION)


class AgentRuntime(RuntimeClient):
    def __init__(
        self,
        client: Client,
        runs: RunStore,
        task_queue: str = DEFAULT_TASK_QUEUE,
        *,
        begin_timeout: float = DEFAULT_BEGIN_TIMEOUT,
        plaintext_refused: bool = False,
        max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
        max_iterations_ceiling: int = MAX_ITERATIONS_CEILING,
    ) -> None:
        """`begin_timeout`: how long `start` waits for a worker to begin the run. A run
        starts on its profile's own queue as the workers registered it (store/
        profile_registry.py), else on `task_queue`. `plaintext_refused`: this client sends
        payloads unencrypted where the deployment did not allow plaintext history, so
        `start` refuses a profile below privacy `full` (PayloadKeysRequiredError) and one
        no worker registered (UnknownProfileError: its privacy is unknown). A longer prompt
        than `max_prompt_chars` is refused (PromptTooLongError) before anything is sent."""
        self._client = client
        self._plaintext_refused = plaintext_refused
        self._max_prompt_chars = max_prompt_chars
        self._max_iterations_ceiling = max_iterations_ceiling
        self._runs = runs
        self._profiles = ProfileRegistry(runs.ctx)
        self._launcher = Launcher(client, task_queue, begin_timeout=begin_timeout)
        self._engine: Engine | None = None  # set when connect() opened the store

    @classmethod
    def deployed(cls, client: Client, runs: RunStore, settings: Settings) -> Self:
        """The runtime a deployment's `settings` call for, over `client` and `runs`: its
        queue, start timeout and prompt cap, and plaintext refused unless payloads are
        encrypted or the deployment allows plaintext history."""
        return cls(
            client,
            runs,
            settings.temporal.task_queue,
            begin_timeout=settings.temporal.start_timeout_seconds,
            plaintext_refused=client.data_converter.payload_codec is None
            and not settings.privacy.allow_plaintext_history,
            max_prompt_chars=settings.limits.max_prompt_chars,
            max_iterations_ceiling=settings.limits.max_iterations_ceiling,
        )

    @classmethod
    async def connect(cls, settings: Settings | None = None) -> Self:
        """Connect to a running deployment (settings from the environment when not given):
        its Temporal frontend and the database its workers use. Creates nothing: no
        migration, no data directory, no seal key. Raises ConfigError,
        StoreUnavailableError or TemporalUnavailableError, each naming the setting to change.
        Close it with `close()`, or use it as `async with await AgentRuntime.connect():`."""
        settings, engine, ctx, client = await open_deployment(settings)
        runtime = cls.deployed(client, RunStore(ctx), settings)
        runtime._engine = engine
        return runtime

    @classmethod
    async def from_env(cls) -> Self:
        """`connect()` with every setting from AGENTRT_* in the environment (and `.env`)."""
        return await cls.connect()

    @property
    def max_prompt_chars(self) -> int:
        """The prompt cap this runtime starts runs under (AGENTRT_MAX_PROMPT_CHARS)."""
        return self._max_prompt_chars

    @property
    def max_iterations_ceiling(self) -> int:
        """The most rounds a start may ask for (AGENTRT_MAX_ITERATIONS_CEILING)."""
        return self._max_iterations_ceiling

    @property
    def client(self) -> Client:
        """The Temporal client this runtime starts and signals runs with."""
        return self._client

    async def close(self) -> None:
        """Release the database connections `connect()` opened; idempotent."""
        engine, self._engine = self._engine, None
        if engine is not None:
            await asyncio.to_thread(engine.dispose)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @temporal_errors_typed
    async def submit(
        self,
        request: StartRequest,
        *,
        initiator: str | None = None,
        a2a_task_id: str | None = None,
        wait: StartWait = "begun",
        registered: RegisteredProfile | None = None,
    ) -> str:
        """Start the run `request` asks for (made by `StartRequest.checked` with this
        deployment's prompt cap; the worker refuses a longer prompt in any case), as
        `initiator` ("anonymous" when None); returns its uuid once the run exists, or with
        `wait="accepted"` once Temporal holds it (STARTING until a worker begins it).
        `registered`: the profile's registry entry, when the caller has just read it."""
        if registered is None or registered.name != request.profile:
            registered = await asyncio.to_thread(self._profiles.get, request.profile)
        if self._plaintext_refused:
            if registered is None:
                raise unregistered(request.profile)
            if registered.privacy != "full":
                raise payload_keys_required(request.profile)
        run_id = str(request.run_id or uuid.uuid4())
        put = self._launcher.accept if wait == "accepted" else self._launcher.launch
        await put(
            request.run_request(run_id, initiator or "anonymous", a2a_task_id),
            self._launcher.task_queue_of(registered),
        )
        return run_id

    async def withdrawal(self, run_id: str) -> NoWorkerError | None:
        """The error a start of `run_id` was withdrawn with (NoWorkerError or
        WorkersBusyError), the answer to that start sent again; None if not withdrawn."""
        return await self._launcher.withdrawal(run_id)

    async def starting(self, run_id: str) -> RunView | None:
        """The STARTING view of a run Temporal holds that no worker has begun; None once
        its row exists or when Temporal holds no open run (`status` answers either way)."""
        if await self._view(run_id) is not None:
            return None
        return await starting_view(self._client, run_id)

    async def task_queue_of(self, profile: str) -> str:
        """The task queue a run of `profile` is started on."""
        registered = await asyncio.to_thread(self._profiles.get, profile)
        return self._launcher.task_queue_of(registered)

    @temporal_errors_typed
    async def run(
        self,
        profile: str,
        prompt: str,
        *,
        max_iterations: int | None = None,
        initiator: str | None = None,
    ) -> RunView:
        """Start a run and wait until it settles or pauses for approval (outcome
        AWAITING_APPROVAL). Returns the run whatever its outcome."""
        run_id = await self.start(
            profile, prompt, max_iterations=max_iterations, initiator=initiator
        )
        return await self.wait(run_id)

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
    async def events(self, run_id: str, after_sequence: int = -1) -> list[EventView]:
        """The run's events after `after_sequence`; none yet while it is STARTING."""
        if (await self.status(run_id)).status is RunStatus.STARTING:
            return []
        return await asyncio.to_thread(self._runs.events, run_id, after_sequence)

    async def follow(self, run_id: str) -> AsyncIterator[EventView | LiveDelta]:
        """Every event and live piece of the run until it ends. A run Temporal holds that
        no worker has begun yet (an accepted start) is waited for while it stays so; typed
        errors for a run that is not there, failed to begin, or was withdrawn."""
        await self._begun(run_id)
        async for item in follow_store(self._runs, LiveStore(self._runs.ctx), run_id):
            yield item

    async def _begun(self, run_id: str, poll_seconds: float = 0.5) -> None:
        # Polled: nothing signals a run's beginning to this process. `status` raises for a
        # run that failed to begin or was withdrawn: it never will.
        while True:
            if (await self.status(run_id)).status is not RunStatus.STARTING:
                return
            await asyncio.sleep(poll_seconds)

    def _attestation_key(self) -> Sealer:
        # Whoever holds the seal key and the database is trusted to name the decider.
        return self._runs.sealer

    @temporal_errors_typed
    async def _decide(self, run_id: str, decision: ApprovalDecision) -> RunView:
        """Raises a typed ApprovalError (or RunNotFoundError) before anything executes;
        never raises for the run's outcome."""
        view = await self.status(run_id)
        if view.status is not RunStatus.WAITING_FOR_APPROVAL:
            raise RunNotAwaitingApprovalError(f"run {run_id} is {view.status.value}")
        pending = view.pending_approval
        digest = pending.turn_digest if pending is not None else None
        await send_decision(self._client, run_id, decision, self._runs.sealer, digest)
        return await self.status(run_id)

    @temporal_errors_typed
    async def _reconcile(self, run_id: str, answer: ReconcileAnswer) -> RunView:
        """Raises a typed ReconcileError (or RunNotFoundError) before anything executes."""
        view = await self.status(run_id)
        if view.status is not RunStatus.AWAITING_RECONCILIATION:
            raise RunNotAwaitingReconciliationError(f"run {run_id} is {view.status.value}")
        await send_answer(self._client, run_id, answer, self._runs.sealer)
        return await self.status(run_id)

    @temporal_errors_typed
    async def refused_decisions(self, run_id: str) -> list[DecisionRefusal]:
        """Decisions sent by signal (fire-and-forget) that the run refused, oldest first,
        each with its reason as a sentence; the run was left unchanged by them. None while
        it is STARTING: no worker has read a decision yet (nor could answer the query)."""
        if (await self.status(run_id)).status is RunStatus.STARTING:
            return []
        refused: list[DecisionRefusal] = await self._client.get_workflow_handle(run_id).query(
            QUERY_REFUSED_DECISIONS, result_type=list[DecisionRefusal]
        )
        return refused

    @temporal_errors_typed
    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        """Ask the run to cancel. A run that already ended stays as it ended."""
        request = checked_cancel(by, reason)
        try:
            view = await self.status(run_id)
        except RunNotBegunError:
            # Its workflow closed without beginning it (failed, or withdrawn): it stays so.
            await cancel_workflow(self._client, run_id, request)
            return
        if view.status.terminal:
            return
        # A STARTING run too: the workflow begins, then settles the cancel, like any other.
        await cancel_workflow(self._client, run_id, request)

    @temporal_errors_typed
    async def inbox(self, limit: int = 50) -> list[RunView]:
        """Runs waiting for approval, oldest first, each with its pending calls."""
        return await asyncio.to_thread(self._runs.inbox, limit)

    async def attention(self, limit: int = 50) -> list[RunView]:
        query = RunQuery(self._runs.ctx)
        return await asyncio.to_thread(partial(query.attention, visible_to=None, limit=limit))

    async def _view(self, run_id: str) -> RunView | None:
        return await asyncio.to_thread(self._runs.get, run_id)
