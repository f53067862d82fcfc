"""Waits for the event that proves a state was reached, never for a length of time: a run's
stored status, an event in its Temporal history, an update the server admitted, a call a
test watches. Each is bounded (`within`): past it, the test fails saying what never came."""

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType, TaskQueueType, UpdateWorkflowExecutionLifecycleStage
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import (
    DescribeTaskQueueRequest,
    PollWorkflowExecutionUpdateRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import RunView
from agentrt.starter.facade import AgentRuntime

POLL = 0.05  # seconds between two looks at what a wait watches
T = TypeVar("T")


async def until_found(
    look: Callable[[], Awaitable[T | None]], what: str, within: float = 30.0
) -> T:
    """Look with `look` until it finds something (not None), and return it; fail naming
    `what` after `within` seconds."""
    deadline = asyncio.get_running_loop().time() + within
    while (found := await look()) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"never {what} within {within:g}s")
        await asyncio.sleep(POLL)
    return found


async def until(found: Callable[[], Awaitable[bool]], what: str, within: float = 30.0) -> None:
    """Look with `found` until it says yes; fail naming `what` after `within` seconds."""

    async def yes() -> bool | None:
        return True if await found() else None

    await until_found(yes, what, within)


async def until_polled(client: Client, queue: str, within: float = 60.0) -> None:
    """Until Temporal lists a poller of `queue`'s workflow tasks: the worker is serving."""

    async def polled() -> bool:
        described = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            )
        )
        return len(described.pollers) > 0

    await until(polled, f"polled queue {queue}", within)


async def until_status(
    runtime: AgentRuntime, run_id: str, *wanted: RunStatus, within: float = 30.0
) -> RunView:
    """Poll the stored run until it has one of `wanted` statuses (bounded)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            view = await runtime.status(run_id)
            if view.status in wanted:
                return view
        except Exception:  # the run row may not exist for a few ms after start
            view = None
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"run {run_id} never reached {wanted}: {view}")
        await asyncio.sleep(POLL)


async def until_history(
    client: Client,
    run_id: str,
    found: Callable[[Sequence[HistoryEvent]], bool],
    what: str,
    within: float = 30.0,
) -> Sequence[HistoryEvent]:
    """The run's Temporal history, once `found` says it holds what the test waits for."""
    handle = client.get_workflow_handle(run_id)
    events: Sequence[HistoryEvent] = ()

    async def look() -> bool:
        nonlocal events
        events = (await handle.fetch_history()).events
        return found(events)

    await until(look, f"{what} in the history of {run_id}", within)
    return events


CANCEL_REQUESTED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED
TASK_DONE = (EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,)
TASK_ENDED = (*TASK_DONE, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)


def has(kind: EventType.ValueType) -> Callable[[Sequence[HistoryEvent]], bool]:
    """A history predicate: an event of `kind` is recorded."""
    return lambda events: any(e.event_type == kind for e in events)


def taken_after(
    mark: EventType.ValueType, ends: Sequence[EventType.ValueType] = TASK_DONE
) -> Callable[[Sequence[HistoryEvent]], bool]:
    """A history predicate: a workflow task completed (or ended as `ends` says) after the
    first `mark` event, so a worker has had what `mark` recorded (a signal, a cancel
    request) and answered it."""

    def found(events: Sequence[HistoryEvent]) -> bool:
        kinds = [e.event_type for e in events]
        if mark not in kinds:
            return False
        return any(k in ends for k in kinds[kinds.index(mark) :])

    return found


async def until_admitted(client: Client, run_id: str, update_id: str, within: float = 30.0) -> None:
    """Until the server holds the update `update_id` for the run (admitted: it reaches the
    next worker that polls), whether or not a worker is polling now."""
    request = PollWorkflowExecutionUpdateRequest(
        namespace=client.namespace,
        update_ref=UpdateRef(
            workflow_execution=WorkflowExecution(workflow_id=run_id), update_id=update_id
        ),
        identity="tests",
        wait_policy=WaitPolicy(
            lifecycle_stage=UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED
        ),
    )

    async def admitted() -> bool:
        try:
            await client.workflow_service.poll_workflow_execution_update(request)
        except RPCError as err:
            if err.status is RPCStatusCode.NOT_FOUND:
                return False  # not sent yet
            raise
        return True

    await until(admitted, f"admitted update {update_id} of {run_id}", within)


async def workflow_gone(client: Client, workflow_id: str) -> bool:
    """Whether Temporal holds no workflow of that id: never started, or deleted."""
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return True
        raise
    return False


async def until_gone(client: Client, workflow_id: str, within: float = 30.0) -> None:
    """Until Temporal holds no workflow of that id (it deletes asynchronously)."""
    await until(lambda: workflow_gone(client, workflow_id), f"{workflow_id} deleted", within)


async def until_closed(client: Client, run_id: str, within: float = 30.0) -> None:
    """Until the run's workflow has closed, however it ended: nothing of it runs after."""
    handle = client.get_workflow_handle(run_id)

    async def closed() -> bool:
        return (await handle.describe()).close_time is not None

    await until(closed, f"closed workflow {run_id}", within)


class Calls:
    """The calls of one method a test watches (`watch`): how many returned and how many
    raised, to wait for the call that shows the code under test got where it should."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.returned: list[Any] = []
        self.raised: list[BaseException] = []

    @contextmanager
    def counting(self) -> Iterator[None]:
        """Count the call inside as raised if it raises (`returning` counts a return)."""
        try:
            yield
        except BaseException as err:
            self.raised.append(err)
            raise

    def returning(self, result: Any) -> Any:
        self.returned.append(result)
        return result

    async def until(self, what: Callable[["Calls"], bool], said: str, within: float = 30.0) -> None:
        async def found() -> bool:
            return what(self)

        await until(found, f"{said} ({self.name})", within)


def watch(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> Calls:
    """Wrap `owner.name` (a function or method, sync or async) so each call is counted; the
    wrapped behaviour is the real one. Undone when the test ends."""
    real = getattr(owner, name)
    calls = Calls(f"{getattr(owner, '__name__', owner)}.{name}")

    if inspect.iscoroutinefunction(real):

        @functools.wraps(real)
        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            with calls.counting():
                return calls.returning(await real(*args, **kwargs))

        monkeypatch.setattr(owner, name, counted_async)
    else:

        @functools.wraps(real)
        def counted(*args: Any, **kwargs: Any) -> Any:
            with calls.counting():
                return calls.returning(real(*args, **kwargs))

        monkeypatch.setattr(owner, name, counted)
    return calls


def pending_digest(view: RunView) -> str:
    """The turn digest a decision on the approval `view` waits on must carry."""
    assert view.pending_approval is not None
    return view.pending_approval.turn_digest


async def decide(runtime: AgentRuntime, view: RunView, *, approved: bool, by: str = "bob") -> None:
    """Approve or deny the turn `view` is waiting on, by that turn's digest."""
    assert view.pending_approval is not None
    digest = view.pending_approval.turn_digest
    reason = None if approved else "not this one"  # a denial needs one
    await runtime.approve(
        view.run_id, approved=approved, decided_by=by, turn_digest=digest, reason=reason
    )
