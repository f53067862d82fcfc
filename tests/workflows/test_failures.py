"""Failure paths: retries never duplicate events; bad input gets a typed error and changes
nothing. (A failed completion never COMPLETES: tests/settle/test_completion_failures.py.)"""

import time
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
from sqlalchemy.exc import OperationalError
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import InvalidRequestError, RunNotFoundError, UnknownProfileError
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from tests.conftest import FailTimes

MakeRuntime = Callable[[Callable[[str], None]], AbstractAsyncContextManager[AgentRuntime]]


# The read's point is after its rows were built, unwritten (they ride with the next model
# call, workflows/riding.py): its retry builds them again, and they are written once.
@pytest.mark.parametrize("point", ["model.after_record", "tool.after_defer"])
async def test_a_retried_activity_writes_no_duplicate_event(
    make_runtime: MakeRuntime, point: str
) -> None:
    hook = FailTimes(point, times=1)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "what about my order?")
        events = await runtime.events(view.run_id)
    assert hook.reached >= 2  # the activity ran again after the injected failure
    assert view.status is RunStatus.COMPLETED
    seqs = [e.sequence for e in events]
    assert seqs == list(range(len(events)))
    assert [e.kind for e in events] == [
        EventKind.RUN_STARTED,
        EventKind.LLM,
        EventKind.TOOL,
        EventKind.LLM,
        EventKind.RUN_COMPLETED,
    ]


async def test_a_tool_exception_is_fail_soft_and_its_text_is_never_stored(
    make_runtime: MakeRuntime, runs: RunStore
) -> None:
    async with make_runtime(FailTimes("tool.invoke", times=100)) as runtime:
        view = await runtime.run("auto", "what about my order?")
        events = await runtime.events(view.run_id)
    assert view.status is RunStatus.COMPLETED
    tool = next(e for e in events if e.kind is EventKind.TOOL)
    assert tool.payload["is_error"] is True
    assert "hunter2" not in str([e.payload for e in events])
    assert all("hunter2" not in m.content for m in runs.transcript(view.run_id))


async def test_unknown_profile_is_a_typed_error_and_writes_nothing(
    runtime: AgentRuntime, worker: Worker, runs: RunStore
) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(UnknownProfileError):  # start itself: the run never begins
        await runtime.start("no-such-profile", "hello", run_id=run_id)
    with pytest.raises(UnknownProfileError):
        await runtime.result(run_id)
    assert runs.get(run_id) is None


async def test_bad_requests_are_refused_before_anything_starts(runtime: AgentRuntime) -> None:
    with pytest.raises(InvalidRequestError):
        await runtime.start("auto", "   ")
    with pytest.raises(InvalidRequestError):
        await runtime.start("auto", "hi", max_iterations=0)
    with pytest.raises(InvalidRequestError):
        await runtime.start("auto", "hi", run_id="not-a-uuid")
    with pytest.raises(RunNotFoundError):
        await runtime.status("00000000-0000-0000-0000-000000000000")
    with pytest.raises(RunNotFoundError):
        await runtime.events("00000000-0000-0000-0000-000000000000")


class SleepAt:
    """A fault hook that makes the tool sleep past its timeout on every attempt."""

    def __init__(self, point: str, seconds: float) -> None:
        self.point = point
        self.seconds = seconds
        self.reached = 0

    def __call__(self, point: str) -> None:
        if point == self.point:
            self.reached += 1
            time.sleep(self.seconds)


@pytest.mark.timeout(90)
async def test_a_tool_that_times_out_on_every_attempt_settles_the_run_failed(
    make_runtime: MakeRuntime, client: Client
) -> None:
    """Before: the workflow closed FAILED ("Activity task timed out") over a RUNNING row."""
    hook = SleepAt("tool.invoke", seconds=2.5)  # the profile allows the tool 1 s
    async with make_runtime(hook) as runtime:
        run_id = await runtime.start("slow-tools", "what about my order?")
        handle = client.get_workflow_handle(run_id)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        view = await runtime.status(run_id)
        events = await runtime.events(run_id)
    desc = await handle.describe()
    assert hook.reached >= 2  # retried, timed out each time
    assert desc.status is not None and desc.status.name == "FAILED"
    assert view.status is RunStatus.FAILED and view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.TOOL_FAILED
    assert events[-1].kind is EventKind.RUN_FAILED
    assert events[-1].payload["error_type"] == "TimeoutError"


class StoreAwayAt:
    """A fault hook that fails at `point` the first `times` times as the driver does when
    PostgreSQL is unreachable (the real SQLAlchemy error, host and port in its text)."""

    def __init__(self, point: str, times: int) -> None:
        self.point = point
        self.left = times

    def __call__(self, point: str) -> None:
        if point == self.point and self.left > 0:
            self.left -= 1
            raise OperationalError(
                "SELECT 1", {}, Exception('connection to server at "127.0.0.1", port 5432 failed')
            )


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("point", "times"),
    # One failure more than each activity's own attempts: model 5, and the completion is
    # made by the model activity on its answer, so 5 too.
    [("model.before_provider", 6), ("complete.before_commit", 6)],
)
async def test_store_trouble_in_a_step_is_waited_out_not_blamed_on_the_step(
    make_runtime: MakeRuntime, client: Client, point: str, times: int
) -> None:
    """Before: the run ended provider_failed (model) or completion_failed (completion) with
    error type OperationalError, the driver's text (host, port) in Temporal's history."""
    hook = StoreAwayAt(point, times=times)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "what about my order?")
    assert hook.left == 0
    assert view.status is RunStatus.COMPLETED  # waited the outage out
    history = await client.get_workflow_handle(view.run_id).fetch_history()
    # A failed activity, or a failed local activity (begin, complete): its marker.
    failures = [
        e.activity_task_failed_event_attributes.failure
        for e in history.events
        if e.HasField("activity_task_failed_event_attributes")
    ] + [
        e.marker_recorded_event_attributes.failure
        for e in history.events
        if e.HasField("marker_recorded_event_attributes")
        and e.marker_recorded_event_attributes.HasField("failure")
    ]
    assert failures, "the store failure never reached the workflow"
    for f in failures:
        assert f.application_failure_info.type == "StoreUnavailable"
        text = f"{f.message} {f.stack_trace} {f.cause}"
        for word in ("127.0.0.1", "5432", "OperationalError", "psycopg", "sqlalchemy"):
            assert word not in text
