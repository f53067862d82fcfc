"""Who may schedule what (issue 44): the scopes schedules:read and schedules:manage, and the
profile grants of a start. A principal schedules only a profile it may start (and holds
runs:start); a schedule of a profile it is not granted is invisible to it (404, absent
from the list) and out of its reach; the retention schedule is no schedule of runs. Every
refusal creates and changes nothing."""

import asyncio
import uuid
from typing import Any

from temporalio.client import Client

from agentrt.contracts.ids import SCHEDULE_RETENTION
from agentrt.core.settings import Settings
from agentrt.starter import schedules
from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, http, name, token
from tests.api.test_schedules import MANAGER, body, listed
from tests.starter._schedules import absent, schedule_name


async def test_scopes_decide_who_reads_and_who_changes(live: Live, client: Client) -> None:
    schedule = schedule_name("scoped")
    reader = token(live, name("reader"), "schedules:read")
    no_start = token(live, name("nostart"), "schedules:manage")
    runner = token(live, name("runner"), "runs:start", "runs:read")
    for secret in (reader, no_start, runner):
        async with http(live, secret) as api:
            reply = await api.post("/schedules", json=body(schedule))
            assert reply.status_code == 403 and error_type(reply) == "forbidden", reply.text
            assert await absent(client, schedule)
    async with http(live, runner) as api:
        assert (await api.get("/schedules")).status_code == 403
    async with http(live, None) as api:
        assert (await api.get("/schedules")).status_code == 401
    async with http(live, token(live, name("owner"), *MANAGER)) as owner:
        assert (await owner.post("/schedules", json=body(schedule, paused=True))).status_code == 201
        try:
            async with http(live, reader) as api:
                assert (await listed(api, schedule))["paused"] is True
                assert (await api.get(f"/schedules/{schedule}")).status_code == 200
                for verb in ("pause", "resume", "trigger"):
                    reply = await api.post(f"/schedules/{schedule}/{verb}")
                    assert reply.status_code == 403, (verb, reply.text)
                assert (await api.delete(f"/schedules/{schedule}")).status_code == 403
            async with http(live, no_start) as api:  # manage without runs:start
                for verb in ("resume", "trigger"):
                    reply = await api.post(f"/schedules/{schedule}/{verb}")
                    assert reply.status_code == 403, (verb, reply.text)
            assert (await owner.get(f"/schedules/{schedule}")).json()["recent_runs"] == []
        finally:
            assert (await owner.delete(f"/schedules/{schedule}")).status_code == 204


async def test_a_profile_not_granted_is_neither_scheduled_nor_seen(
    live: Live, client: Client
) -> None:
    schedule = schedule_name("granted")
    narrow = token(live, name("narrow"), *MANAGER, profiles=["redactor"])
    async with http(live, narrow) as api:
        reply = await api.post("/schedules", json=body(schedule))  # helper: not granted
        assert reply.status_code == 403 and error_type(reply) == "profile_not_granted"
        assert "helper" in reply.json()["error"]["message"]
        assert await absent(client, schedule)
    async with http(live, token(live, name("wide"), *MANAGER)) as wide:
        assert (await wide.post("/schedules", json=body(schedule, paused=True))).status_code == 201
        try:
            await listed(wide, schedule)  # visible, so the narrow list below is not early
            async with http(live, narrow) as api:
                shown = (await api.get("/schedules")).json()["schedules"]
                assert schedule not in [s["name"] for s in shown]
                reply = await api.get(f"/schedules/{schedule}")
                assert reply.status_code == 404 and error_type(reply) == "schedule_not_found"
                for verb in ("pause", "trigger"):
                    reply = await api.post(f"/schedules/{schedule}/{verb}")
                    assert reply.status_code == 404, (verb, reply.text)
                assert (await api.delete(f"/schedules/{schedule}")).status_code == 404
            view: dict[str, Any] = (await wide.get(f"/schedules/{schedule}")).json()
            assert view["paused"] is True and view["recent_runs"] == []  # nothing changed
        finally:
            await wide.delete(f"/schedules/{schedule}")


async def test_the_retention_schedule_is_out_of_reach(
    live: Live, client: Client, settings: Settings
) -> None:
    """Even an admin's token reaches only schedules of runs: the deployment's retention
    pass is not one (it is not found, and stays)."""
    retention = f"{SCHEDULE_RETENTION}-{uuid.uuid4().hex[:8]}"
    assert await schedules.apply(client, settings, retention) == "created"
    try:
        async with http(live, token(live, name("admin"), "admin")) as api:
            for reply in await asyncio.gather(
                api.get(f"/schedules/{retention}"),
                api.post(f"/schedules/{retention}/trigger"),
                api.post(f"/schedules/{retention}/pause"),
                api.delete(f"/schedules/{retention}"),
            ):
                assert reply.status_code == 404 and error_type(reply) == "schedule_not_found"
            shown = (await api.get("/schedules")).json()["schedules"]
            assert retention not in [s["name"] for s in shown]
        desc = await client.get_schedule_handle(retention).describe()
        assert not desc.schedule.state.paused and not desc.info.recent_actions
    finally:
        await client.get_schedule_handle(retention).delete()
