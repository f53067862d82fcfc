"""`POST /runs` under the retry contract (issue 28 item 7): a start no worker began in time
is withdrawn with the real cause (503 `no_worker`: nobody polls; `busy`: workers poll but
none began it), and the same start sent again answers that same 503, never the run as live;
an accepted start (`Prefer: respond-async`) answers 202 STARTING once Temporal holds it."""

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from agentrt.api.operator import starts
from agentrt.api.operator.feeds import TokenChecks
from agentrt.api.operator.starts import respond_async
from agentrt.api.settings import ApiSettings
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import NoWorkerError, RunNotBegunError, RunNotFoundError
from agentrt.starter import remote
from agentrt.starter.cli import main as cli_main
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests.api.conftest import Live
from tests.api.ops_helpers import (
    LOOKUP,
    Frame,
    error_type,
    frames,
    http,
    lonely_api,
    name,
    token,
    wait_status,
)
from tests.workflows._waiting import until_closed, until_found, watch

FIXTURES = Path(__file__).parent / "fixtures"
ASYNC = {"Prefer": "respond-async"}
SSE = {"Accept": "text/event-stream"}


def _worker(client: Client, live: Live, queue: str) -> Worker:
    """A worker for the lonely queue, as an operator starts one."""
    return make_worker(client, live.parts, live.settings.replace(temporal={"task_queue": queue}))


async def _closed(client: Client, run_id: str) -> WorkflowExecutionStatus | None:
    await until_closed(client, run_id)
    return (await client.get_workflow_handle(run_id).describe()).status


async def _listed_starting(api: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """The run as `GET /runs?status=STARTING` lists it (Temporal's list lags a moment)."""

    async def listed() -> dict[str, Any] | None:
        page = (await api.get("/runs", params={"status": "STARTING"})).json()["runs"]
        return next((r for r in page if r["run_id"] == run_id), None)

    return await until_found(listed, f"run {run_id} listed as STARTING", 10)


@workflow.defn(name="NotAnAgentRun")
class NotAnAgentRun:
    """What a bare worker serves: it polls the queue, but cannot begin an agent run there
    (the run's workflow task fails on it and is retried), as a saturated fleet cannot."""

    @workflow.run
    async def run(self) -> None:
        return None


async def test_a_resent_start_of_a_withdrawn_run_answers_the_same_503_never_live(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    """The issue's repro: no worker, POST, 503, resend, start a worker. Every answer to the
    start, before and after the worker came, is the withdrawal's; the run ends CANCELLED."""
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
        async with http(live, secret) as api:
            first = await api.post("/runs", json=body)
            # Sent again, and a worker comes while it may still wait: it must not be told
            # the run began (it is being withdrawn).
            resending = asyncio.create_task(api.post("/runs", json=body))
            await asyncio.sleep(0.3)
            async with _worker(client, live, lonely):
                resent = await resending
                closed = await _closed(client, body["run_id"])
                ended = await wait_status(api, body["run_id"], "CANCELLED")
                after = await api.post("/runs", json=body)
                accepted_after = await api.post("/runs", json=body, headers=ASYNC)
    for reply in (first, resent, after, accepted_after):
        assert reply.status_code == 503, reply.text
        assert error_type(reply) == "no_worker"
        assert reply.headers["retry-after"] == "1"
        assert "withdrawn" in reply.json()["error"]["message"]
    assert f"no worker is polling task queue {lonely!r}" in first.json()["error"]["message"]
    assert "was withdrawn: no worker on task queue" in resent.json()["error"]["message"]
    assert closed is WorkflowExecutionStatus.CANCELED
    assert ended["failure"] is not None


async def test_a_start_workers_poll_but_do_not_begin_is_503_busy(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
        async with (
            Worker(
                client,
                task_queue=lonely,
                workflows=[NotAnAgentRun],
                workflow_runner=UnsandboxedWorkflowRunner(),
            ),
            http(live, secret) as api,
        ):
            first = await api.post("/runs", json=body)
            resent = await api.post("/runs", json=body)
    for reply in (first, resent):
        assert reply.status_code == 503, reply.text
        assert error_type(reply) == "busy", reply.text
        assert reply.headers["retry-after"] == "5"
    message = first.json()["error"]["message"]
    assert f"workers poll task queue {lonely!r} but none began run" in message
    assert "Traceback" not in message and "127.0.0.1" not in message


async def test_an_accepted_start_answers_202_starting_and_begins_when_a_worker_comes(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        alice = name("alice")
        starter = token(live, alice, "runs:start", "runs:read")
        other = token(live, name("eve"), "runs:start", "runs:read")
        reader = token(live, name("rita"), "runs:read-all")
        body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
        async with http(live, starter) as api, http(live, other) as eve:
            began = time.monotonic()
            accepted = await api.post("/runs", json=body, headers=ASYNC)
            took = time.monotonic() - began
            seen = await api.get(f"/runs/{body['run_id']}")
            hidden = await eve.get(f"/runs/{body['run_id']}")
            async with http(live, reader) as rita:
                read_all = await rita.get(f"/runs/{body['run_id']}")
            listed = await _listed_starting(api, body["run_id"])
            others = (await eve.get("/runs", params={"status": "STARTING"})).json()["runs"]
            resent = await api.post("/runs", json=body, headers=ASYNC)
            stolen = await eve.post("/runs", json=body, headers=ASYNC)
            # Past the start bound: a start sent after it, waiting for a worker, has been
            # withdrawn (503), so the accepted one would have been too, were it ever to be.
            later = await api.post("/runs", json={"profile": "helper", "prompt": LOOKUP})
            assert (later.status_code, error_type(later)) == (503, "no_worker"), later.text
            still = await api.get(f"/runs/{body['run_id']}")
            async with _worker(client, live, lonely):
                done = await wait_status(api, body["run_id"], "COMPLETED")
    assert accepted.status_code == 202, accepted.text
    assert accepted.headers["preference-applied"] == "respond-async"
    assert took < 2.0, f"an accepted start waited {took:.1f}s, as if for a worker"
    run: dict[str, Any] = accepted.json()["run"]
    assert (run["status"], run["initiator"], run["profile"]) == ("STARTING", alice, "helper")
    for reply in (seen, read_all, resent, still):
        assert reply.status_code in (200, 202), reply.text
        got = reply.json().get("run") or reply.json()
        assert got["status"] == "STARTING" and got["initiator"] == alice
    assert resent.status_code == 200
    assert listed["initiator"] == alice and listed["status"] == "STARTING"
    assert body["run_id"] not in {r["run_id"] for r in others}  # not eve's to see
    assert hidden.status_code == 404  # another principal's run: absent alike
    assert (stolen.status_code, error_type(stolen)) == (409, "run_id_taken")
    assert done["initiator"] == alice


async def test_a_follow_of_an_accepted_start_waits_for_it_to_begin_and_sees_it_end(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No row yet (STARTING, no worker): the follow stays open, not `end` at once; once a
    worker comes, it sees every event of the run, then `end` with its terminal status."""
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        starter = token(live, name("alice"), "runs:start", "runs:read")
        body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
        seen: list[Frame] = []
        async with http(live, starter) as api:
            accepted = await api.post("/runs", json=body, headers=ASYNC)
            assert accepted.status_code == 202, accepted.text

            async def follow() -> None:
                url = f"/runs/{body['run_id']}/events"
                async with api.stream("GET", url, headers=SSE) as reply:
                    assert reply.status_code == 200, await reply.aread()
                    async for f in frames(reply):
                        seen.append(f)

            checks = watch(monkeypatch, TokenChecks, "active")
            follower = asyncio.create_task(follow())
            # Past a wake and a token recheck (due a second after the stream began): still
            # following.
            await checks.until(lambda c: True in c.returned, "the stream rechecked its token")
            assert not follower.done() and seen == [], seen
            async with _worker(client, live, lonely):
                await asyncio.wait_for(follower, 60)
            page = (await api.get(f"/runs/{body['run_id']}/events")).json()["events"]
    assert seen[-1].event == "end" and seen[-1].data["status"] == "COMPLETED", seen[-1]
    assert [f.id for f in seen[:-1]] == [e["sequence"] for e in page] and page


async def test_an_accepted_start_is_refused_a_profile_not_granted(live: Live) -> None:
    secret = token(live, name("ops"), "runs:start", "runs:read", profiles=["guarded"])
    async with http(live, secret) as api:
        reply = await api.post("/runs", json={"profile": "helper", "prompt": LOOKUP}, headers=ASYNC)
    assert (reply.status_code, error_type(reply)) == (403, "profile_not_granted"), reply.text


def test_prefer_respond_async_is_read_as_rfc_7240_says() -> None:
    assert respond_async("respond-async")
    assert respond_async("handling=lenient, Respond-Async; wait=5")
    assert respond_async("respond-async=")
    assert not respond_async(None)
    assert not respond_async("return=minimal")
    assert not respond_async("respond-asynchronously")


async def test_the_http_client_starts_accepted_and_names_the_cause_of_a_withdrawal(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, _):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        async with remote.api_session(live.url, secret) as api:
            run_id = await api.start("helper", LOOKUP, wait="accepted")
            starting = await api.status(run_id)
            with pytest.raises(NoWorkerError, match="503 no_worker") as err:
                await api.start("helper", LOOKUP)
    assert (starting.run_id, starting.status) == (run_id, RunStatus.STARTING)
    assert type(err.value) is NoWorkerError
    await client.get_workflow_handle(run_id).terminate(reason="test over")


async def test_status_in_process_and_over_http_agree_on_an_accepted_start(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    """`AgentRuntime.status` answers what `GET /runs/{id}` (and so the HTTP client) answers:
    STARTING while no worker has begun the run, no events yet; once its workflow closed
    without beginning it, neither knows the run (RunNotFoundError, 404)."""
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, _):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        async with remote.api_session(live.url, secret) as api:
            run_id = await api.start("helper", LOOKUP, wait="accepted")
            over_http, in_process = await api.status(run_id), await live.runtime.status(run_id)
            events = (await api.events(run_id), await live.runtime.events(run_id))
            await client.get_workflow_handle(run_id).terminate(reason="test over")
            with pytest.raises(RunNotFoundError, match="404 run_not_found"):
                await api.status(run_id)
            with pytest.raises(RunNotBegunError, match="never began: its workflow is terminated"):
                await live.runtime.status(run_id)
    assert in_process.status is RunStatus.STARTING
    assert in_process == over_http and in_process.initiator != ""
    assert events == ([], [])


async def test_the_http_clients_result_ends_for_a_withdrawn_run_and_an_unknown_one(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The API answers STARTING for a run Temporal holds, so `result()` over HTTP no longer
    reads a 404 as "not begun yet" for ever: a run it saw STARTING whose workflow then
    closed unbegun raises at once; an id it never saw raises once UNSEEN_SECONDS pass."""
    monkeypatch.setattr(remote, "UNSEEN_SECONDS", 1.0)
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, _):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        async with remote.api_session(live.url, secret) as api:
            run_id = await api.start("helper", LOOKUP, wait="accepted")
            reads = watch(monkeypatch, remote.ApiRuntime, "status")
            waiting = asyncio.create_task(api.result(run_id))
            await reads.until(lambda c: bool(c.returned), "the run seen STARTING")
            assert reads.returned[0].status is RunStatus.STARTING
            assert not waiting.done()
            await client.get_workflow_handle(run_id).terminate(reason="test over")
            with pytest.raises(RunNotFoundError, match="404 run_not_found"):
                await asyncio.wait_for(waiting, 10)
            began = time.monotonic()
            with pytest.raises(RunNotFoundError, match="404 run_not_found"):
                await asyncio.wait_for(api.result(str(uuid.uuid4())), 10)
            assert time.monotonic() - began >= 1.0


async def test_the_cli_starts_accepted_through_the_api(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, _):
        secret = token(live, name("ops"), "runs:start", "runs:read")
        api = ["--api", live.url, "--token", secret]
        capsys.readouterr()
        code = await asyncio.to_thread(cli_main, [*api, "start", "--accepted", "helper", LOOKUP])
        out, err = capsys.readouterr()
        assert code == 0, err
        run_id = out.strip()
        async with http(live, secret) as http_api:
            seen = await http_api.get(f"/runs/{run_id}")
        code = await asyncio.to_thread(cli_main, [*api, "start", "helper", LOOKUP])
        _, refused = capsys.readouterr()
    assert (seen.status_code, seen.json()["status"]) == (200, "STARTING"), seen.text
    assert code == 2 and "no_worker" in refused and "Traceback" not in refused
    await client.get_workflow_handle(run_id).terminate(reason="test over")


async def test_an_accepted_start_no_worker_began_is_cancelled_by_its_starter(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        secret = token(live, name("ops"), "runs:start", "runs:read", "runs:cancel")
        async with http(live, secret) as api:
            accepted = await api.post(
                "/runs", json={"profile": "helper", "prompt": LOOKUP}, headers=ASYNC
            )
            run_id = accepted.json()["run_id"]
            cancel = await api.post(f"/runs/{run_id}/cancel", json={"reason": "not needed"})
            async with _worker(client, live, lonely):
                ended = await wait_status(api, run_id, "CANCELLED")
                # While the worker runs: the workflow closes in a task after the settle, and
                # a worker shut down before that task leaves it open (nothing to close it).
                closed = await _closed(client, run_id)
    assert cancel.status_code == 202, cancel.text
    assert closed is WorkflowExecutionStatus.CANCELED
    assert ended["failure"] is not None


async def test_an_accepted_start_says_where_its_time_went(live: Live) -> None:
    """Server-Timing: the token read, the start's reads (its profile and the run id sent,
    one hop) and Temporal's start, in that order, within the time the client waited."""
    secret = token(live, name("alice"), "runs:start", "runs:read")
    body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
    async with http(live, secret) as api:
        began = time.monotonic()
        reply = await api.post("/runs", json=body, headers=ASYNC)
        took = time.monotonic() - began
        await wait_status(api, body["run_id"], "COMPLETED")
    assert reply.status_code == 202, reply.text
    phases = [p.strip().split(";dur=") for p in reply.headers["server-timing"].split(",")]
    assert [n for n, _ in phases] == ["token", "reads", "temporal"], phases
    durations = [float(d) / 1000 for _, d in phases]
    assert all(d >= 0 for d in durations) and sum(durations) <= took, (durations, took)


async def test_a_start_not_granted_is_refused_before_its_run_id_is_looked_up(
    live: Live,
) -> None:
    """A principal not granted the profile is refused 403 even when the run id it sends is
    another's run: its reads stop at the profile, so it learns nothing of that run."""
    alice = token(live, name("alice"), "runs:start", "runs:read")
    eve = token(live, name("eve"), "runs:start", "runs:read", profiles=["guarded"])
    body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
    async with http(live, alice) as api, http(live, eve) as other:
        started = await api.post("/runs", json=body)
        refused = await other.post("/runs", json=body, headers=ASYNC)
        await wait_status(api, body["run_id"], "COMPLETED")
    assert started.status_code == 201, started.text
    assert (refused.status_code, error_type(refused)) == (403, "profile_not_granted"), refused.text


async def test_a_start_sent_again_while_temporal_holds_its_run_unbegun_answers_200_starting(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first send's answer was lost (its API process killed after Temporal took the
    run): Temporal holds the run, no worker has begun it, nothing withdrew it. The same
    start sent again, begun, answers 200 with that run as it stands (STARTING), as the
    retry contract says, not 409 `run_id_taken`; another principal's send of the id is."""
    # Each begun send waits this long for the row no worker writes here; how long is not
    # what this tests (10 s by default: 20 s of this test's 21).
    monkeypatch.setattr(starts, "BEGIN_WAIT_SECONDS", 2.0)
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        alice = name("alice")
        starter = token(live, alice, "runs:start", "runs:read")
        other = token(live, name("eve"), "runs:start", "runs:read")
        body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
        async with http(live, starter) as api, http(live, other) as eve:
            # Stands for a send whose answer was lost: Temporal holds the run, no row.
            first = await api.post("/runs", json=body, headers=ASYNC)
            resent = await api.post("/runs", json=body)
            stolen = await eve.post("/runs", json=body)
            async with _worker(client, live, lonely):
                done = await wait_status(api, body["run_id"], "COMPLETED")
    assert first.status_code == 202, first.text
    assert resent.status_code == 200, resent.text
    run = resent.json()["run"]
    assert (run["status"], run["initiator"]) == ("STARTING", alice), run
    assert (stolen.status_code, error_type(stolen)) == (409, "run_id_taken"), stolen.text
    assert done["initiator"] == alice
