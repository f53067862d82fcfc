"""`AgentRuntime`: the Python API for clients. It connects to a deployment, starts runs,
decides on them and cancels them; reading a run (status, wait, follow) is its base classes'
job (starter/_reading.py), as are answering, cancelling and querying one that exists
(starter/_steering.py). It never runs the agent itself."""

import asyncio
import uuid
from types import TracebackType
from typing import Self

from sqlalchemy import Engine
from temporalio.client import Client

from agentrt.contracts.approval import DecisionRefusal
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    NoWorkerError,
)
from agentrt.contracts.ids import DEFAULT_TASK_QUEUE, QUERY_REFUSED_DECISIONS
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS
from agentrt.contracts.start import StartRequest, StartWait
from agentrt.contracts.views import RunView
from agentrt.core.codec import EncryptionCodec
from agentrt.core.settings import Settings
from agentrt.starter._connecting import open_deployment
from agentrt.starter._inputs import attested_input, send_input
from agentrt.starter._launch import Launcher
from agentrt.starter._starting import (
    payload_key_mismatch,
    payload_keys_required,
    unregistered,
)
from agentrt.starter._steering import RunSteering
from agentrt.starter._typed import temporal_errors_typed
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore

DEFAULT_BEGIN_TIMEOUT = 30.0  # seconds; a polling worker begins a run within moments


class AgentRuntime(RunSteering):
    """The in-process client: a Temporal client and the deployment's database.

    Make one with `AgentRuntime.connect(settings)` (or `from_env()`) and close it, or use
    it as an async context manager.
    """

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
        codec = client.data_converter.payload_codec
        self._payload_key = codec.active_key if isinstance(codec, EncryptionCodec) else None
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
        registered = await self.startable(request.profile, registered, must_exist=False)
        run_id = str(request.run_id or uuid.uuid4())
        put = self._launcher.accept if wait == "accepted" else self._launcher.launch
        await put(
            request.run_request(run_id, initiator or "anonymous", a2a_task_id),
            self._launcher.task_queue_of(registered),
        )
        return run_id

    async def startable(
        self, profile: str, registered: RegisteredProfile | None = None, *, must_exist: bool = True
    ) -> RegisteredProfile | None:
        """`profile` as its workers registered it, refused (before anything exists in
        Temporal) when this client could not start it: payload keys, and, with
        `must_exist` (a schedule) or plaintext refused, a profile no worker registered."""
        if registered is None or registered.name != profile:
            registered = await asyncio.to_thread(self._profiles.get, profile)
        if registered is None:
            if must_exist or self._plaintext_refused:
                raise unregistered(profile)
            return None
        if self._plaintext_refused and registered.privacy != "full":
            raise payload_keys_required(profile)
        mismatch = payload_key_mismatch(registered, self._payload_key)
        if mismatch is not None:
            raise mismatch
        return registered

    def queue_of(self, registered: RegisteredProfile | None) -> str:
        """The task queue a run of `registered` starts on (its own, else this client's)."""
        return self._launcher.task_queue_of(registered)

    async def withdrawal(self, run_id: str) -> NoWorkerError | None:
        """The error a start of `run_id` was withdrawn with (NoWorkerError or
        WorkersBusyError), the answer to that start sent again; None if not withdrawn."""
        return await self._launcher.withdrawal(run_id)

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

    async def submit_input(self, run_id: str, *, message_id: str, text: str, sent_by: str) -> None:
        """A follow-up message for a run waiting for input (WAITING_FOR_INPUT), attested for
        `sent_by` with this client's seal key: a run takes no message without it. The A2A
        API's path: the one answer path, as `answer` with an `InputMessage` takes it, but
        Temporal's refusal (WorkflowUpdateFailedError) and a missing run (RPCError) are
        raised as they are (the A2A API maps them: api/a2a/tasks.py). Returns once the
        message is on record."""
        message = attested_input(
            self._runs.sealer, run_id, message_id=message_id, text=text, sent_by=sent_by
        )
        await send_input(self._client, run_id, message, self._runs.sealer)

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
