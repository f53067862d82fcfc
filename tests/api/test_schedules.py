"""`/schedules` on the operator API (api/operator/schedules.py) against a live server, its
worker, the real dev server and database: create, list, show, pause, resume, trigger (one
run, whose initiator names the schedule and the token's principal), backfill, delete, and
bad input that creates nothing."""

import json
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, http, name, token, wait_status
from tests.api.test_ops_cli import _agentrt, no_backends  # noqa: F401
from tests.starter._schedules import LOOKUP, absent, schedule_name
from tests.workflows._waiting import until_found

# runs:read-all: a fire's run names the schedule as its initiator, not the token's
# principal, so runs:read alone (one's own runs) does not show it.
MANAGER = ("schedules:manage", "runs:start", "runs:read-all")


async def listed(api: httpx.AsyncClient, schedule: str, within: float = 30) -> dict[str, Any]:
    """The schedule as GET /schedules shows it, once Temporal's visibility has it."""

    async def shown() -> dict[str, Any] | None:
        reply = await api.get("/schedules")
        assert reply.status_code == 200, reply.text
        return next((v for v in reply.json()["schedules"] if v["name"] == schedule), None)

    return await until_found(shown, f"schedule {schedule} in GET /schedules", within)


async def first_run(api: httpx.AsyncClient, schedule: str, within: float = 60) -> str:
    """The run id of the schedule's first fire, once it fired."""

    async def first() -> str | None:
        reply = await api.get(f"/schedules/{schedule}")
        assert reply.status_code == 200, reply.text
        runs: list[str] = reply.json()["recent_runs"]
        return runs[0] if runs else None

    return await until_found(first, f"a fire of schedule {schedule}", within)


def body(schedule: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": schedule, "profile": "helper", "prompt": LOOKUP}
    out.update(fields)
    if "cron" not in out and "every" not in out:
        out["every"] = "1h"
    return out


async def test_create_list_trigger_pause_resume_delete(live: Live, client: Client) -> None:
    who = name("sched")
    schedule = schedule_name("api")
    async with http(live, token(live, who, *MANAGER)) as api:
        reply = await api.post("/schedules", json=body(schedule, paused=True))
        assert reply.status_code == 201, reply.text
        made = reply.json()
        assert made["created_by"] == who and made["paused"] and made["overlap"] == "skip"
        assert "prompt" not in made  # a list never shows a schedule's prompt
        try:
            assert (await listed(api, schedule))["spec"] == "every 1h"
            reply = await api.post(f"/schedules/{schedule}/trigger")
            assert reply.status_code == 202, reply.text
            run_id = await first_run(api, schedule)
            run = await wait_status(api, run_id, "COMPLETED", seconds=60)
            assert run["initiator"] == f"schedule:{schedule} by {who}"
            reply = await api.post(f"/schedules/{schedule}/resume")
            assert reply.status_code == 200 and not reply.json()["paused"], reply.text
            assert reply.json()["next_fires"]
            reply = await api.post(f"/schedules/{schedule}/pause")
            assert reply.json()["paused"] and reply.json()["note"] == f"paused by {who}"
            assert (await api.get(f"/schedules/{schedule}")).json()["recent_runs"] == [run_id]
        finally:
            reply = await api.delete(f"/schedules/{schedule}")
        assert reply.status_code == 204, reply.text
        assert await absent(client, schedule)
        reply = await api.get(f"/schedules/{schedule}")
        assert reply.status_code == 404 and error_type(reply) == "schedule_not_found"


async def test_bad_input_is_a_typed_refusal_and_creates_nothing(live: Live, client: Client) -> None:
    schedule = schedule_name("bad")
    async with http(live, token(live, name("sched"), *MANAGER)) as api:
        for fields, status, kind, wanted in (
            ({"cron": "61 * * * *"}, 400, "invalid_request", "Minute is not in range"),
            ({"cron": "whenever"}, 400, "invalid_request", "5-7 fields"),
            ({"every": "soon"}, 400, "invalid_request", "not an interval"),
            ({"profile": "nobody"}, 400, "unknown_profile", "'nobody'"),
            ({"colour": "red"}, 422, "unknown_fields", "colour"),
            ({"overlap": "twice"}, 400, "invalid_request", "overlap"),
        ):
            reply = await api.post("/schedules", json=body(schedule, **fields))
            assert reply.status_code == status, (fields, reply.text)
            assert error_type(reply) == kind and wanted in reply.json()["error"]["message"]
            assert await absent(client, schedule)
        reply = await api.post("/schedules", content=b"not json")
        assert reply.status_code == 400 and error_type(reply) == "invalid_request"
        reply = await api.post(f"/schedules/{schedule}/trigger")
        assert reply.status_code == 404 and error_type(reply) == "schedule_not_found"
        reply = await api.post("/schedules/has%20space/trigger")  # no such name can exist
        assert reply.status_code == 404
        made = await api.post("/schedules", json=body(schedule))
        assert made.status_code == 201, made.text
        try:
            again = await api.post("/schedules", json=body(schedule, prompt="another"))
            assert again.status_code == 409 and error_type(again) == "schedule_exists"
            reply = await api.post(
                f"/schedules/{schedule}/backfill",
                json={"start": "2026-01-02T00:00:00Z", "end": "2026-01-01T00:00:00Z"},
            )
            assert reply.status_code == 400 and error_type(reply) == "invalid_request"
        finally:
            await api.delete(f"/schedules/{schedule}")


@pytest.mark.usefixtures("no_backends")
async def test_the_cli_through_the_api_acts_as_the_tokens_principal(
    live: Live, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agentrt --api URL schedules ...` with nothing but the API reachable: the token's
    principal creates (no --initiator), and each verb reaches the same routes."""
    who = name("cli")
    schedule = schedule_name("apicli")
    api = ["--api", live.url, "--token", token(live, who, *MANAGER), "schedules"]
    code, _, err = await _agentrt(
        capsys, *api, "create", schedule, "helper", LOOKUP, "--every", "1h", "--initiator", "x"
    )
    assert code == 2 and "token's principal" in err and await absent(live.runtime.client, schedule)
    code, out, err = await _agentrt(
        capsys, *api, "create", schedule, "helper", LOOKUP, "--every", "1h", "--paused"
    )
    assert code == 0, err
    assert f"by {who}" in out and "paused" in out
    try:
        assert (await _agentrt(capsys, *api, "trigger", schedule))[0] == 0
        async with http(live, token(live, name("r"), *MANAGER)) as reader:
            run_id = await first_run(reader, schedule)
            run = await wait_status(reader, run_id, "COMPLETED", seconds=60)
        assert run["initiator"] == f"schedule:{schedule} by {who}"
        assert (await _agentrt(capsys, *api, "resume", schedule))[0] == 0
        code, out, _ = await _agentrt(capsys, *api, "show", schedule, "--json")
        assert json.loads(out)["paused"] is False and json.loads(out)["recent_runs"] == [run_id]
        code, _, err = await _agentrt(capsys, *api, "create", schedule, "helper", LOOKUP,
                                      "--cron", "61 * * * *")  # fmt: skip
        assert code == 2 and "Minute is not in range" in err
    finally:
        code, out, err = await _agentrt(capsys, *api, "delete", schedule)
    assert code == 0 and "deleted" in out, err
    code, _, err = await _agentrt(capsys, *api, "show", schedule)
    assert code == 2 and "no schedule of runs" in err


async def test_the_openapi_document_lists_the_schedule_routes(live: Live) -> None:
    async with http(live, None) as api:
        doc = (await api.get("/openapi.json")).json()
    paths = doc["paths"]
    assert {"get", "post"} <= set(paths["/schedules"])
    assert {"get", "delete"} <= set(paths["/schedules/{name}"])
    for verb in ("pause", "resume", "trigger", "backfill"):
        assert "post" in paths[f"/schedules/{{name}}/{verb}"]
    create = paths["/schedules"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert create["additionalProperties"] is False and "prompt" in create["properties"]
