"""A start's two waits (issue 28 item 7), in the Python API and the CLI: begun (the default:
a worker has begun the run, else it is withdrawn with its cause, and the same start sent
again answers the same, even while the first is still waiting) and accepted (Temporal
holds the run: STARTING until a worker begins it, and never withdrawn; `status` says so)."""

import asyncio
import time
import uuid
from dataclasses import dataclass

import pytest
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    NoWorkerError,
    WorkersBusyError,
    by_code,
)
from agentrt.contracts.views import EventView
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from tests.starter.test_cli import (  # noqa: F401
    REFUND,
    WorkerFactory,
    agentrt,
    cli_env,
    worker_factory,
)
from tests.workflows._waiting import Calls, until_status, watch


async def test_a_start_sent_again_answers_its_withdrawal_even_while_the_first_waits(
    client: Client, runs: RunStore, task_queue: str
) -> None:
    runtime = AgentRuntime(client, runs, task_queue, begin_timeout=2.0)
    run_id = str(uuid.uuid4())
    # The second send arrives while the first still waits for a worker: it answers only
    # once the first has withdrawn the run, and the same.
    first, second = await asyncio.gather(
        runtime.start("auto", REFUND, run_id=run_id),
        runtime.start("auto", REFUND, run_id=run_id),
        return_exceptions=True,
    )
    later = await asyncio.gather(
        runtime.start("auto", REFUND, run_id=run_id), return_exceptions=True
    )
    for err in (first, second, *later):
        assert type(err) is NoWorkerError, repr(err)
        assert "withdrawn" in str(err)
    withdrawn = await runtime.withdrawal(run_id)
    assert type(withdrawn) is NoWorkerError
    assert await runtime.withdrawal(str(uuid.uuid4())) is None  # no such run: not withdrawn


@dataclass
class Accepted:
    runtime: AgentRuntime
    run_id: str
    took: float  # seconds the start took to return


@pytest.fixture
async def accepted(client: Client, runs: RunStore, task_queue: str) -> Accepted:
    """A run of `support` started with `wait="accepted"` on the test's queue, where no
    worker polls until the test starts one (worker_factory)."""
    runtime = AgentRuntime(client, runs, task_queue, begin_timeout=2.0)
    began = time.monotonic()
    run_id = await runtime.start("support", REFUND, initiator="erin", wait="accepted")
    return Accepted(runtime, run_id, time.monotonic() - began)


async def test_an_accepted_start_returns_without_a_worker_and_begins_when_one_comes(
    accepted: Accepted,
    worker_factory: WorkerFactory,  # noqa: F811
) -> None:
    runtime, run_id = accepted.runtime, accepted.run_id
    assert accepted.took < 2.0, f"an accepted start waited {accepted.took:.1f}s"
    # No row yet: status is the STARTING view Temporal holds, the same `starting` reads.
    status = await runtime.status(run_id)
    assert (status.status, status.initiator, status.profile) == (
        RunStatus.STARTING,
        "erin",
        "support",
    )
    assert await runtime.starting(run_id) == status
    assert await runtime.events(run_id) == []
    assert await runtime.refused_decisions(run_id) == []  # no query to a run no worker has
    # Past the begin bound: a start sent after it with the same bound and no worker has been
    # withdrawn, so the accepted one would have been too, were it ever to be.
    with pytest.raises(NoWorkerError):
        await runtime.start("support", REFUND, initiator="erin")
    assert await runtime.withdrawal(run_id) is None
    assert (await runtime.status(run_id)).status is RunStatus.STARTING
    async with worker_factory():
        await until_status(runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
        assert await runtime.starting(run_id) is None  # its row is the truth now
        await runtime.cancel(run_id, by="test")
        await until_status(runtime, run_id, RunStatus.CANCELLED)


def starting_reads(calls: Calls) -> int:
    """How many watched `AgentRuntime.status` reads found the run STARTING."""
    return sum(v.status is RunStatus.STARTING for v in calls.returned)


async def test_a_follow_of_an_accepted_start_waits_for_it_to_begin_then_sees_it_end(
    accepted: Accepted,
    worker_factory: WorkerFactory,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, run_id = accepted.runtime, accepted.run_id
    seen: list[int] = []

    async def follow() -> None:
        async for item in runtime.follow(run_id):
            if isinstance(item, EventView):
                seen.append(item.sequence)

    polls = watch(monkeypatch, AgentRuntime, "status")
    follower = asyncio.create_task(follow())
    # No worker: the follow reads the run STARTING, and again, neither ending nor failing.
    await polls.until(lambda c: starting_reads(c) >= 2, "the follow read the run twice")
    assert not follower.done() and seen == []
    async with worker_factory():
        await until_status(runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
        await runtime.cancel(run_id, by="test")
        await asyncio.wait_for(follower, 30)
    assert (await runtime.status(run_id)).status is RunStatus.CANCELLED
    assert seen == [e.sequence for e in await runtime.events(run_id)] and seen


@pytest.mark.usefixtures("cli_env", "parts")  # a worker registered `auto`, none polls now
async def test_cli_start_accepted_prints_the_run_without_waiting_for_a_worker(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    client: Client,
) -> None:
    monkeypatch.setenv("AGENTRT_START_TIMEOUT_SECONDS", "2")
    code, out, err = await asyncio.wait_for(
        agentrt(capsys, "start", "--accepted", "auto", REFUND), 30
    )
    assert code == 0, err
    run_id = out.strip()
    desc = await client.get_workflow_handle(run_id).describe()
    assert desc.close_time is None  # held by Temporal, waiting for a worker
    await client.get_workflow_handle(run_id).terminate(reason="test over")


def test_busy_and_no_worker_are_their_own_errors_on_the_wire() -> None:
    assert by_code("busy") is WorkersBusyError
    assert by_code("no_worker") is NoWorkerError
    assert issubclass(WorkersBusyError, NoWorkerError)  # `except NoWorkerError` still holds
