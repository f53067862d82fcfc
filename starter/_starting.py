"""Starting a run for `AgentRuntime.start`: the Update-with-Start operation, and the typed
error for each way a start can fail or a run can be missing."""

import asyncio
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    AgentRuntimeError,
    ConfigError,
    ErrorType,
    InvalidRequestError,
    PayloadKeysRequiredError,
    PromptTooLongError,
    RunNotBegunError,
    RunNotFoundError,
    StoreUnavailableError,
    TemporalUnavailableError,
    UnknownProfileError,
)
from agentrt.contracts.ids import MEMO_INITIATOR, SA_PROFILE, SA_RUN_STATUS, WORKFLOW_AGENT_RUN
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.run import RunRequest

PROFILE_KEY = SearchAttributeKey.for_keyword(SA_PROFILE)
STATUS_KEY = SearchAttributeKey.for_keyword(SA_RUN_STATUS)

MISSING_SEARCH_ATTRIBUTES = (
    "the Temporal namespace lacks agentrt's search attributes: register AgentRunStatus and "
    "AgentProfile (Keyword), e.g. `temporal operator search-attribute create --name "
    "AgentProfile --type Keyword`, or start the dev server with `--search-attribute "
    "AgentProfile=Keyword --search-attribute AgentRunStatus=Keyword`"
)


def payload_keys_required(profile: str) -> PayloadKeysRequiredError:
    return PayloadKeysRequiredError(
        f"profile {profile!r} keeps less than everything (privacy below full), but this "
        "client sends Temporal payloads unencrypted: its prompt would stay in Temporal's "
        "history in the clear. Set AGENTRT_PAYLOAD_KEYS (the workers' too), or "
        "AGENTRT_ALLOW_PLAINTEXT_HISTORY=true to accept that"
    )


def payload_key_mismatch(
    registered: RegisteredProfile, client_key: str | None
) -> PayloadKeysRequiredError | None:
    """Why the workers serving `registered` could not read what this client sends, or None.
    Nothing to say when they did not register their keys (an earlier build), or have none:
    a client that encrypts where workers do not leaves nothing in the clear."""
    worker_keys = [k for k in (registered.payload_keys or "").split(",") if k]
    if not worker_keys:
        return None
    if client_key is None:
        return PayloadKeysRequiredError(
            f"the workers serving profile {registered.name!r} encrypt Temporal payloads "
            f"(key {worker_keys[0]!r}), and this client has no payload keys: they would refuse "
            "its start, whose prompt would stay in Temporal in the clear. Set "
            "AGENTRT_PAYLOAD_KEYS to the workers' keys"
        )
    if client_key not in worker_keys:
        return PayloadKeysRequiredError(
            f"this client encrypts with payload key {client_key!r}, which the workers serving "
            f"profile {registered.name!r} do not have (theirs: {', '.join(worker_keys)}): "
            "give AGENTRT_PAYLOAD_KEYS the same keys on both"
        )
    return None


def unregistered(profile: str) -> UnknownProfileError:
    return UnknownProfileError(
        f"unknown agent profile {profile!r}: no worker has registered it (a worker "
        "registers the profiles it serves when it starts)"
    )


def start_options(request: RunRequest, queue: str, status: RunStatus) -> dict[str, Any]:
    """What a start tells Temporal beside the input, either way a start waits."""
    kind = "A2A task" if request.a2a_task_id else "agent run"
    return {
        "id": request.run_id,
        "task_queue": queue,
        "id_conflict_policy": WorkflowIDConflictPolicy.FAIL,
        "id_reuse_policy": WorkflowIDReusePolicy.REJECT_DUPLICATE,
        "static_summary": f"{kind} ({request.profile})",
        # Who started it, for the operator API's view of a run no worker has begun yet
        # (its STARTING view shows only to its initiator and to readers of all runs).
        "memo": {MEMO_INITIATOR: request.initiator},
        # Operators filter runs by profile and status in Temporal Web (config, never user
        # content). RUNNING from a begun-start: the workflow then upserts no status of its
        # own when the run begins (one search-attribute update less per run); it clears it
        # should the run never begin. An accepted start says STARTING until the run begins
        # (`started_running` is then false, so the workflow upserts RUNNING).
        "search_attributes": TypedSearchAttributes(
            [
                SearchAttributePair(PROFILE_KEY, request.profile),
                SearchAttributePair(STATUS_KEY, status.value),
            ]
        ),
    }


def start_operation(request: RunRequest, queue: str) -> WithStartWorkflowOperation[Any, Any]:
    options = start_options(request, queue, RunStatus.RUNNING)
    return WithStartWorkflowOperation(WORKFLOW_AGENT_RUN, request, **options)


def begin_error(cause: BaseException, profile: str) -> AgentRuntimeError:
    """The typed error of a run that could not begin (the `begun` update's failure)."""
    kind = cause.type if isinstance(cause, ApplicationError) else None
    if kind == ErrorType.UNKNOWN_PROFILE:
        return UnknownProfileError(
            f"unknown agent profile {profile!r}: the worker's profiles do not declare it"
        )
    message = cause.message if isinstance(cause, ApplicationError) else type(cause).__name__
    if kind == ErrorType.ITERATIONS_OVER_CEILING:
        return InvalidRequestError(f"the worker refused the start: {message}")
    if kind == ErrorType.PROMPT_TOO_LONG:
        return PromptTooLongError(f"the worker refused the prompt: {message}")
    if kind == ErrorType.STORE_UNAVAILABLE:
        return StoreUnavailableError(f"the worker could not reach its database: {message}")
    return AgentRuntimeError(message)


async def retrieve_start_error(start: WithStartWorkflowOperation[Any, Any]) -> None:
    """Read the operation's start outcome, so asyncio does not log an unretrieved exception
    with a traceback: the SDK sets the call's error on the start's future too. After the
    update-with-start call raised, that future is already done (the SDK settles it before it
    re-raises), so this takes one loop turn; the bound only keeps a changed SDK from holding
    us. Through the public `workflow_handle()`, in a task of its own, so a CancelledError the
    future may hold never reads as this caller's own cancellation."""
    task = asyncio.ensure_future(start.workflow_handle())
    done, _ = await asyncio.wait({task}, timeout=1.0)
    if task in done and not task.cancelled():
        task.exception()
    task.cancel()


def start_rpc_error(err: RPCError) -> ConfigError | None:
    """A Temporal server without our search attributes (a stock `start-dev`) says so here."""
    if "no mapping defined for search attribute" in err.message:
        return ConfigError(MISSING_SEARCH_ATTRIBUTES)
    return None


def lost_while_starting(err: RPCError, run_id: str) -> TemporalUnavailableError:
    return TemporalUnavailableError(
        f"lost the connection to Temporal while starting run {run_id} ({err.message}): if "
        "Temporal accepted the run, it begins once Temporal is back"
    )


async def missing_run(client: Client, run_id: str) -> RunNotFoundError:
    """Why a run has no row: no such run, or (RunNotBegunError) its workflow exists but has
    not begun it, failed to begin it, or was withdrawn."""
    handle = client.get_workflow_handle(run_id)
    try:
        desc = await handle.describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return RunNotFoundError(f"no run {run_id}")
        raise
    match desc.status:
        case None | WorkflowExecutionStatus.RUNNING:
            return RunNotBegunError(
                f"run {run_id} is accepted by Temporal but not begun yet: is a worker "
                f"polling task queue {desc.task_queue!r}?",
                pending=True,
            )
        case WorkflowExecutionStatus.FAILED:
            try:
                await handle.result()
            except WorkflowFailureError as failed:
                cause = failed.cause
                why = cause.message if isinstance(cause, ApplicationError) else str(cause)
                return RunNotBegunError(f"run {run_id} failed to begin: {why}")
    return RunNotBegunError(f"run {run_id} never began: its workflow is {desc.status.name.lower()}")
