"""Operator API over real HTTP: start, read, list with filters and a stable cursor,
visibility by principal, the OpenAPI document, and the A2A routes still beside it."""

import asyncio
import uuid

import pytest
from temporalio.client import Client

from agentrt.contracts.errors import RunIdTakenError
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.remote import ApiRuntime
from agentrt.workers.main import make_worker
from tests.api.conftest import Live
from tests.api.ops_helpers import LOOKUP, REFUND, error_type, http, name, start, token, wait_status
from tests.workflows._waiting import watch


async def test_openapi_document_lists_every_operator_route(live: Live) -> None:
    async with http(live, None) as client:
        doc = (await client.get("/openapi.json")).json()
        card = await client.get("/.well-known/agent-card.json")
    assert card.status_code == 200  # the A2A routes are served by the same app
    paths = doc["paths"]
    assert set(paths) >= {
        "/runs", "/runs/{run_id}", "/runs/{run_id}/events", "/runs/{run_id}/decision",
        "/runs/{run_id}/cancel", "/inbox",
    }  # fmt: skip
    assert {"get", "post"} <= set(paths["/runs"])
    assert "HTTPBearer" in doc["components"]["securitySchemes"]


async def test_start_get_and_list_paged_by_cursor_with_filters(live: Live) -> None:
    alice = name("alice")
    async with http(live, token(live, alice, "runs:start", "runs:read")) as client:
        started = [await start(client, "helper", LOOKUP) for _ in range(3)]
        ids = [s["run_id"] for s in started]
        assert all(s["run"]["initiator"] == alice for s in started)
        for run_id in ids:
            done = await wait_status(client, run_id, "COMPLETED")
            assert done["profile"] == "helper" and done["answer"]
        first = (await client.get("/runs", params={"limit": 2})).json()
        assert [r["run_id"] for r in first["runs"]] == ids[::-1][:2]  # newest first
        assert first["next_cursor"]
        # A run started meanwhile does not shift the pages already handed out.
        extra = await start(client, "helper", LOOKUP)
        second = await client.get("/runs", params={"limit": 2, "cursor": first["next_cursor"]})
        assert [r["run_id"] for r in second.json()["runs"]] == [ids[0]]
        assert second.json()["next_cursor"] is None
        by_status = await client.get("/runs", params={"status": "COMPLETED", "limit": 200})
        assert set(ids) <= {r["run_id"] for r in by_status.json()["runs"]}
        by_profile = await client.get("/runs", params={"profile": "internal"})
        assert by_profile.json()["runs"] == []
        by_initiator = await client.get("/runs", params={"initiator": alice, "limit": 200})
        assert {r["run_id"] for r in by_initiator.json()["runs"]} == {*ids, extra["run_id"]}
        one = await client.get(f"/runs/{ids[0]}")
        assert one.status_code == 200 and one.json()["status"] == "COMPLETED"


async def test_a_start_with_its_own_run_id_is_safe_to_retry(live: Live) -> None:
    """A client that lost the answer to a start sends it again: with the same run_id it gets
    the run it started (200), not a second one; another principal cannot take that id."""
    alice = name("alice")
    run_id = str(uuid.uuid4())
    body = {"profile": "helper", "prompt": LOOKUP, "run_id": run_id}
    async with http(live, token(live, alice, "runs:start", "runs:read")) as client:
        first = await client.post("/runs", json=body)
        again = await client.post("/runs", json=body)
        await wait_status(client, run_id, "COMPLETED")
        mine = (await client.get("/runs", params={"initiator": alice})).json()["runs"]
        other_profile = await client.post("/runs", json={**body, "profile": "redactor"})
        not_a_uuid = await client.post("/runs", json={**body, "run_id": "r-1"})
    assert (first.status_code, again.status_code) == (201, 200), (first.text, again.text)
    assert first.json()["run_id"] == again.json()["run_id"] == run_id
    assert again.json()["run"]["initiator"] == alice
    assert [r["run_id"] for r in mine] == [run_id]  # one run, not two
    assert other_profile.status_code == 409 and error_type(other_profile) == "run_id_taken"
    assert not_a_uuid.status_code == 400
    async with http(live, token(live, name("bob"), "runs:start", "runs:read")) as as_bob:
        taken = await as_bob.post("/runs", json=body)
    assert taken.status_code == 409 and error_type(taken) == "run_id_taken"
    assert run_id in taken.json()["error"]["message"]


async def test_a_repeated_start_temporal_accepted_before_its_row_is_written_gets_its_run(
    live: Live, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start's answer was lost after Temporal accepted it: the retry meets a workflow of
    that id whose row no worker has written yet. It waits for the row, then answers 200."""
    alice = name("alice")
    run_id = str(uuid.uuid4())
    lonely = f"later-{uuid.uuid4().hex[:8]}"  # no worker yet: the row cannot exist
    await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(run_id=run_id, profile="helper", prompt=LOOKUP, initiator=alice),
        id=run_id,
        task_queue=lonely,
    )
    body = {"profile": "helper", "prompt": LOOKUP, "run_id": run_id}
    async with http(live, token(live, alice, "runs:start", "runs:read")) as api:
        submits = watch(monkeypatch, AgentRuntime, "submit")
        retry = asyncio.create_task(api.post("/runs", json=body))
        # Temporal said the run id is taken: the API now waits for the row.
        await submits.until(lambda c: bool(c.raised), "the start turned away by Temporal")
        assert type(submits.raised[0]) is RunIdTakenError
        assert not retry.done()  # waiting for the row
        settings = live.settings.replace(temporal={"task_queue": lonely})
        async with make_worker(client, live.parts, settings):
            reply = await retry
    assert reply.status_code == 200, reply.text
    assert reply.json()["run_id"] == run_id and reply.json()["run"]["initiator"] == alice


async def test_a_principal_sees_only_its_own_runs_unless_read_all(live: Live) -> None:
    alice, bob, carol = name("alice"), name("bob"), name("carol")
    async with http(live, token(live, alice, "runs:start", "runs:read")) as as_alice:
        run_id = (await start(as_alice, "helper", LOOKUP))["run_id"]
        await wait_status(as_alice, run_id, "COMPLETED")
    async with http(live, token(live, bob, "runs:start", "runs:read")) as as_bob:
        assert (await as_bob.get(f"/runs/{run_id}")).status_code == 404
        assert (await as_bob.get(f"/runs/{run_id}/events")).status_code == 404
        listed = (await as_bob.get("/runs", params={"limit": 200})).json()["runs"]
        assert listed == []  # bob started nothing
        assert (await as_bob.get("/runs", params={"initiator": alice})).json()["runs"] == []
    async with http(live, token(live, carol, "runs:read", "runs:read-all")) as as_carol:
        assert (await as_carol.get(f"/runs/{run_id}")).json()["initiator"] == alice
        listed = (await as_carol.get("/runs", params={"initiator": alice})).json()["runs"]
        assert [r["run_id"] for r in listed] == [run_id]


async def test_events_are_paged_by_sequence(live: Live) -> None:
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read")) as client:
        run_id = (await start(client, "helper", LOOKUP))["run_id"]
        await wait_status(client, run_id, "COMPLETED")
        everything = (await client.get(f"/runs/{run_id}/events")).json()
        assert everything["more"] is False
        kinds = [e["kind"] for e in everything["events"]]
        assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
        seen, after = [], -1
        while True:
            page = await client.get(f"/runs/{run_id}/events", params={"after": after, "limit": 2})
            body = page.json()
            seen += body["events"]
            after = body["next_after"]
            if not body["more"]:
                break
        assert seen == everything["events"]


@pytest.mark.parametrize("profile", ["no-such-profile"])
async def test_start_refuses_an_unknown_profile_and_creates_nothing(
    live: Live, profile: str
) -> None:
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read")) as client:
        reply = await client.post("/runs", json={"profile": profile, "prompt": REFUND})
        assert reply.status_code == 400 and error_type(reply) == "unknown_profile"
        assert (await client.get("/runs")).json()["runs"] == []


async def test_start_is_one_validated_request_refused_before_anything_is_created(
    live: Live,
) -> None:
    """Issue 26: the body of POST /runs is contracts.run.StartRequest, validated once with
    the one iteration bound; an unknown field (an `initiator` above all: the principal
    starts the run) and a bound past the ceiling are refused, nothing created."""
    who = name("alice")
    base = {"profile": "helper", "prompt": LOOKUP}
    async with http(live, token(live, who, "runs:start", "runs:read")) as client:
        for body, says in (
            (
                {**base, "max_iterations": 21},
                "and 20, got 21 (the installation's ceiling, AGENTRT_MAX_ITERATIONS_CEILING",
            ),
            ({**base, "max_iterations": 0}, "max_iterations must be between 1 and 20"),
            ({**base, "prompt": "   "}, "prompt is empty"),
            ({**base, "run_id": "nope"}, "is not a uuid"),
            ([base], "a JSON object"),
        ):
            reply = await client.post("/runs", json=body)
            assert reply.status_code == 400, reply.text
            assert error_type(reply) == "invalid_request"
            assert says in reply.json()["error"]["message"], reply.text
        # Unknown fields: a 422 naming each, with the closest known one (issue 28).
        for body, says in (
            ({**base, "initiator": "mallory"}, "unknown field initiator; known: max_iterations"),
            ({**base, "max_iteration": 2}, "unknown field max_iteration (did you mean max_it"),
        ):
            reply = await client.post("/runs", json=body)
            assert reply.status_code == 422, reply.text
            assert error_type(reply) == "unknown_fields"
            assert says in reply.json()["error"]["message"], reply.text
        doc = (await client.get("/openapi.json")).json()
        schema = doc["paths"]["/runs"]["post"]["requestBody"]["content"]["application/json"]
        assert schema["schema"]["additionalProperties"] is False
        # The schema's bound is the largest ceiling; the deployment's own is checked above.
        assert schema["schema"]["properties"]["max_iterations"]["maximum"] == 10_000
        assert (await client.get("/runs", params={"initiator": who})).json()["runs"] == []


async def test_a_runs_budget_shows_its_spend_and_nothing_reserved_once_it_ended(
    live: Live,
) -> None:
    """GET /runs/{id}/budget: the workflow's ledger (the `budget` query); a run without a
    budget has no limits, and its spend still adds up. Hidden from other principals."""
    alice = name("alice")
    async with http(live, token(live, alice, "runs:start", "runs:read")) as client:
        run_id = (await start(client, "helper", LOOKUP))["run_id"]
        done = await wait_status(client, run_id, "COMPLETED")
        reply = await client.get(f"/runs/{run_id}/budget")
        through_client = await ApiRuntime(client).budget(run_id)  # the CLI's --api client
    assert reply.status_code == 200, reply.text
    assert through_client.model_dump(mode="json") == reply.json()
    body = reply.json()
    assert body["budget"] is None and body["room"] == {"tokens": None, "cost_usd": None}
    spent = body["spent"]
    assert spent["prompt_tokens"] + spent["completion_tokens"] > 0
    assert (spent["prompt_tokens"], spent["completion_tokens"]) == (
        done["prompt_tokens"], done["completion_tokens"],
    )  # fmt: skip
    assert body["reserved"] == {"tokens": 0, "cost_usd": 0.0}
    async with http(live, token(live, name("bob"), "runs:read")) as as_bob:
        hidden = await as_bob.get(f"/runs/{run_id}/budget")
    assert hidden.status_code == 404
