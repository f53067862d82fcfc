"""`start` fails loudly (issue 9 item 3): it returns only once the run row exists, raises
the typed error of a run that cannot begin, waits a bounded time for a worker and then
withdraws the run, and `status` of a run that failed to begin says so."""

import asyncio
import gc
import logging
import time
import uuid

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import (
    NoWorkerError,
    RunNotBegunError,
    TemporalUnavailableError,
    UnknownProfileError,
)
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from tests._proxy import FlakyProxy
from tests.settle.test_cancel import Gate, MakeRuntime
from tests.starter.test_cli import (  # noqa: F401
    REFUND,
    WorkerFactory,
    agentrt,
    assert_clean_error,
    cli_env,
    worker_factory,
)
from tests.workflows._raw import start_raw
from tests.workflows._waiting import CANCEL_REQUESTED, taken_after, until_history, until_status


async def _close_status(client: Client, run_id: str) -> WorkflowExecutionStatus | None:
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.result()
    except WorkflowFailureError:
        pass
    return (await handle.describe()).status


@pytest.mark.usefixtures("worker")
async def test_start_returns_once_the_run_row_exists(runtime: AgentRuntime, runs: RunStore) -> None:
    run_id = await runtime.start("support", REFUND, initiator="erin")
    view = runs.get(run_id)  # no polling: the row is there when start returns
    assert view is not None and view.initiator == "erin"
    assert view.status in (RunStatus.RUNNING, RunStatus.WAITING_FOR_APPROVAL)
    await until_status(runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
    await runtime.cancel(run_id, by="test")


@pytest.mark.usefixtures("worker")
async def test_start_of_an_unknown_profile_raises_and_writes_nothing(
    runtime: AgentRuntime, runs: RunStore, client: Client
) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(UnknownProfileError, match="unknown agent profile 'nosuch'"):
        await runtime.start("nosuch", "hello", run_id=run_id)
    assert runs.get(run_id) is None
    assert await _close_status(client, run_id) is WorkflowExecutionStatus.FAILED
    # `status` reads the workflow's failure when there is no row.
    with pytest.raises(RunNotBegunError, match=r"failed to begin: .*unknown agent profile") as err:
        await runtime.status(run_id)
    assert not err.value.pending


async def test_start_without_a_worker_fails_in_bounded_time_and_withdraws_the_run(
    client: Client,
    runs: RunStore,
    worker_factory: WorkerFactory,  # noqa: F811
    task_queue: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = AgentRuntime(client, runs, task_queue, begin_timeout=2.0)
    run_id = str(uuid.uuid4())
    began = time.monotonic()
    with pytest.raises(NoWorkerError, match=f"no worker is polling task queue '{task_queue}'"):
        await runtime.start("auto", REFUND, run_id=run_id)
    assert time.monotonic() - began < 15
    # The SDK put the same timeout on the start's own future: read, so asyncio logs no
    # "exception was never retrieved" traceback when that future is collected (a Future's
    # finalizer calls the loop's exception handler at once, so the collection is the event).
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    # Withdrawn, not left to start behind the caller's back: when a worker comes, the run
    # begins and settles CANCELLED at once, and the workflow closes CANCELED.
    async with worker_factory():
        assert await _close_status(client, run_id) is WorkflowExecutionStatus.CANCELED
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    events = await runtime.events(run_id)
    assert [e.kind for e in events] == [EventKind.RUN_STARTED, EventKind.CANCEL]
    assert events[-1].payload["by"] == "agentrt"


async def test_cancel_of_a_run_not_begun_yet_closes_it_canceled(
    client: Client,
    runs: RunStore,
    worker_factory: WorkerFactory,  # noqa: F811
    task_queue: str,
) -> None:
    """A run started by another starter (`temporal workflow start`), not begun yet: the
    facade's cancel is the one path, and the run ends CANCELLED by its actor."""
    runtime = AgentRuntime(client, runs, task_queue)
    run_id = str(uuid.uuid4())
    await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(run_id=run_id, profile="support", prompt=REFUND),
        id=run_id,
        task_queue=task_queue,
    )
    with pytest.raises(RunNotBegunError, match="not begun yet") as err:
        await runtime.status(run_id)
    assert err.value.pending
    await runtime.cancel(run_id, by="ops", reason="not wanted")
    async with worker_factory():
        assert await _close_status(client, run_id) is WorkflowExecutionStatus.CANCELED
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    cancel = (await runtime.events(run_id))[-1]
    assert cancel.kind is EventKind.CANCEL and cancel.payload["by"] == "ops"


@pytest.mark.usefixtures("cli_env", "worker")
async def test_cli_start_of_an_unknown_profile_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = await agentrt(capsys, "start", "nosuch", "hello")
    assert out == ""  # no uuid of a run that will never exist
    assert_clean_error(code, err, "unknown agent profile 'nosuch'")


@pytest.mark.usefixtures("cli_env", "worker")
async def test_cli_status_of_a_run_that_failed_to_begin_says_so(
    capsys: pytest.CaptureFixture[str], client: Client, task_queue: str
) -> None:
    run_id, handle = await start_raw(client, task_queue, "nosuch", "hello")
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    code, _, err = await agentrt(capsys, "status", run_id)
    assert_clean_error(code, err, f"run {run_id} failed to begin", "unknown agent profile")
    assert "not begun yet" not in err


@pytest.mark.usefixtures("cli_env", "parts")  # a worker registered `auto`, none polls now
async def test_cli_start_without_a_worker_is_a_bounded_clean_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, task_queue: str
) -> None:
    monkeypatch.setenv("AGENTRT_START_TIMEOUT_SECONDS", "2")
    code, out, err = await asyncio.wait_for(agentrt(capsys, "start", "auto", REFUND), 30)
    assert out == ""
    assert_clean_error(code, err, f"no worker is polling task queue '{task_queue}'", "withdrawn")


async def test_a_cancel_while_the_run_begins_waits_for_the_row_then_settles_it(
    make_runtime: MakeRuntime, client: Client, runs: RunStore
) -> None:
    """Cutting `begin` short could leave a committed row that nobody settles; the workflow
    lets it finish, then takes the cancel."""
    gate = Gate("begin.before_write")
    async with make_runtime(gate) as runtime:
        run_id = str(uuid.uuid4())
        start = asyncio.create_task(runtime.start("auto", REFUND, run_id=run_id))
        assert await asyncio.to_thread(gate.reached.wait, 30)
        await runtime.cancel(run_id, by="ops")
        # The workflow has taken the cancel request mid-begin.
        await until_history(client, run_id, taken_after(CANCEL_REQUESTED), "the cancel taken")
        gate.release.set()
        assert await asyncio.wait_for(start, 30) == run_id
        assert await _close_status(client, run_id) is WorkflowExecutionStatus.CANCELED
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.CANCELLED
    assert (await runtime.events(run_id))[-1].payload["by"] == "ops"


@pytest.mark.timeout(60)
async def test_start_against_a_server_without_our_search_attributes_says_what_to_register(
    runs: RunStore,
) -> None:
    from temporalio.testing import WorkflowEnvironment

    from agentrt.contracts.errors import ConfigError
    from agentrt.core.devserver import temporal_cli
    from agentrt.core.temporal import data_converter

    # A stock dev server: no AgentRunStatus / AgentProfile search attributes registered.
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_cli(), data_converter=data_converter()
    )
    async with env:
        bare = AgentRuntime(env.client, runs, f"tq-{uuid.uuid4().hex[:8]}")
        with pytest.raises(ConfigError, match="AgentProfile"):
            await bare.start("support", "Please refund order 1042")


async def test_temporal_lost_is_a_typed_error_from_start_and_from_the_reads(
    client: Client, runs: RunStore, task_queue: str
) -> None:
    """The facade on a connection that is cut (a proxy in front of the dev server): `start`
    and the calls that ask Temporal raise TemporalUnavailableError, not the SDK's RPCError."""
    host, port = client.service_client.config.target_host.rsplit(":", 1)
    proxy = FlakyProxy(host, int(port))
    proxy.start()
    try:
        cut = await Client.connect(f"127.0.0.1:{proxy.port}", data_converter=client.data_converter)
        runtime = AgentRuntime(cut, runs, task_queue, begin_timeout=5.0)
        proxy.cut()
        with pytest.raises(TemporalUnavailableError, match="while starting run"):
            await runtime.start("auto", REFUND)
        with pytest.raises(TemporalUnavailableError, match="lost the connection to Temporal"):
            await runtime.status(str(uuid.uuid4()))  # no row: asks Temporal about it
    finally:
        proxy.close()
