"""The runs list and what the page reads a run by (issue 29 item 4), over real HTTP against a
live API, worker and Temporal dev server: GET /runs filters by status, profile and needs
attention within the principal's runs and a bounded page; a failed run carries its reason in
words; a pending turn carries the prompt and the model's text before the calls, at the run's
privacy level (none at metadata)."""

from typing import Any

import httpx

from tests.api.conftest import Live
from tests.api.ops_helpers import LOOKUP, http, name, start, token, wait_status

EXPLAINED = "Please explain the refund for order 1042"
SAID = "Order 1042 qualifies for a full refund; I will issue it."
OUTAGE = "How is order 1042 during an outage?"
MINE = ("runs:start", "runs:read", "runs:cancel")


async def ids(client: httpx.AsyncClient, **params: Any) -> list[str]:
    reply = await client.get("/runs", params={"limit": 200, **params})
    assert reply.status_code == 200, reply.text
    return [r["run_id"] for r in reply.json()["runs"]]


async def three_runs(client: httpx.AsyncClient) -> tuple[str, str, str]:
    """A completed, a failed and a waiting run, one after the other (newest first later)."""
    done = (await start(client, "helper", LOOKUP))["run_id"]
    await wait_status(client, done, "COMPLETED")
    failed = (await start(client, "helper", OUTAGE))["run_id"]
    await wait_status(client, failed, "FAILED", seconds=60)
    waiting = (await start(client, "helper", EXPLAINED))["run_id"]
    await wait_status(client, waiting, "WAITING_FOR_APPROVAL")
    return done, failed, waiting


async def test_the_runs_list_filters_by_status_profile_and_attention(live: Live) -> None:
    who = name("olga")
    async with http(live, token(live, who, *MINE)) as c:
        done, failed, waiting = await three_runs(c)
        assert await ids(c) == [waiting, failed, done]  # newest first, failed ones too
        assert await ids(c, status="FAILED") == [failed]
        assert await ids(c, status="COMPLETED", profile="helper") == [done]
        assert await ids(c, profile="redactor") == []
        assert await ids(c, attention="true") == []  # none failed with a write unknown
        assert await ids(c, attention="false") == [waiting, failed, done]
        run = (await c.get("/runs", params={"status": "FAILED"})).json()["runs"][0]
        # Bounded: a page past 200 runs and an overlong filter are refused.
        for params in ({"limit": 201}, {"profile": "p" * 201}, {"status": "NOPE"}):
            refused = await c.get("/runs", params=params)
            assert refused.status_code == 400, (params, refused.text)
        assert (await c.post(f"/runs/{waiting}/cancel", json={})).status_code == 202
    # The failed run says why in words, with what to do.
    assert run["termination_reason"] == "provider_failed"
    assert run["failure"]["reason"] == "provider_failed"
    assert "provider failed" in run["failure"]["summary"]
    assert "start the run again" in run["failure"]["action"]
    # Scoped: another principal's filtered list holds none of these runs.
    async with http(live, token(live, name("pat"), "runs:read")) as other:
        assert await ids(other, status="FAILED") == []
        assert failed not in await ids(other, profile="helper")


async def test_a_pending_turn_carries_the_prompt_and_what_the_model_said(live: Live) -> None:
    async with http(live, token(live, name("quinn"), *MINE)) as c:
        full = (await start(c, "helper", EXPLAINED))["run_id"]
        waiting = (await wait_status(c, full, "WAITING_FOR_APPROVAL"))["pending_approval"]
        hidden = (await start(c, "guarded", EXPLAINED))["run_id"]  # privacy: metadata
        withheld = (await wait_status(c, hidden, "WAITING_FOR_APPROVAL"))["pending_approval"]
        inbox = {r["run_id"]: r for r in (await c.get("/inbox", params={"limit": 200})).json()}
        for run_id in (full, hidden):
            assert (await c.post(f"/runs/{run_id}/cancel", json={})).status_code == 202
    assert waiting["prompt"] == EXPLAINED and waiting["said"] == SAID
    assert waiting["content_withheld"] is False
    assert inbox[full]["pending_approval"] == waiting
    # At metadata the decider sees the calls' names and effects, and no text at all.
    assert withheld["prompt"] is None and withheld["said"] is None
    assert withheld["content_withheld"] is True
    assert withheld["calls"][0]["arguments"] is None
    assert inbox[hidden]["pending_approval"] == withheld
