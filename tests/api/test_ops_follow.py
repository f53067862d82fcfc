"""`GET /runs/{id}/events` with `Accept: text/event-stream`: a live follow that resumes from
`Last-Event-ID` missing nothing; on PostgreSQL woken by NOTIFY, not by a poll interval."""

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.api.wake import NOTIFY_SAFETY_SECONDS
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests.api.conftest import Live, _serve, user_message
from tests.api.ops_helpers import (
    Frame,
    approve,
    frames,
    http,
    name,
    token,
    waiting_for_approval,
)

SSE = {"Accept": "text/event-stream"}
NOTIFY_ONLY = pytest.mark.skipif(
    backend() != "postgres", reason="LISTEN/NOTIFY is PostgreSQL's; SQLite polls"
)


@pytest_asyncio.fixture
async def live_polling_slowly(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> AsyncIterator[Live]:
    """A server that would poll only every 30 s: what it sees sooner, NOTIFY woke it for."""
    slow = a2a_settings.replace(api={"poll_seconds": 30.0})
    async with _serve(client, slow, a2a_parts) as live:
        yield live


async def _decide_later(c, run_id: str, digest: str, delay: float) -> float:  # type: ignore[no-untyped-def]
    await asyncio.sleep(delay)
    began = time.monotonic()
    reply = await approve(c, run_id, digest)
    assert reply.status_code == 200, reply.text
    return began


async def test_follow_then_resume_with_last_event_id_misses_nothing(live: Live) -> None:
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read", "runs:decide")) as c:
        run_id, digest = await waiting_for_approval(c, "helper")
        first: list[Frame] = []
        async with c.stream("GET", f"/runs/{run_id}/events", headers=SSE) as reply:
            assert reply.status_code == 200
            assert reply.headers["content-type"].startswith("text/event-stream")
            async for f in frames(reply):
                first.append(f)
                if f.event == "approval_requested":
                    break  # the client goes away mid-run
        last = first[-1].id
        assert last is not None
        # Reconnect from the last id seen; the decision lands while this follower waits.
        rest: list[Frame] = []
        async with c.stream(
            "GET", f"/runs/{run_id}/events", headers={**SSE, "Last-Event-ID": str(last)}
        ) as reply:
            decider = asyncio.create_task(_decide_later(c, run_id, digest, 0.3))
            async for f in frames(reply):
                rest.append(f)
            await decider
        assert rest[-1].event == "end" and rest[-1].data["status"] == "COMPLETED"
        page = (await c.get(f"/runs/{run_id}/events")).json()["events"]
    followed = first + rest[:-1]
    assert [f.id for f in followed] == [e["position"] for e in page]  # none missed or twice
    assert [f.data for f in followed] == page
    assert "approval" in [f.event for f in rest] and rest[0].id > last  # type: ignore[operator]


@NOTIFY_ONLY
async def test_notify_wakes_a_follower_long_before_a_poll_interval(
    live_polling_slowly: Live,
) -> None:
    live = live_polling_slowly
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read", "runs:decide")) as c:
        run_id, digest = await waiting_for_approval(c, "helper")
        seen: dict[str, float] = {}
        async with c.stream("GET", f"/runs/{run_id}/events", headers=SSE) as reply:
            decider = asyncio.create_task(_decide_later(c, run_id, digest, 1.0))
            async for f in frames(reply):
                seen.setdefault(f.event, time.monotonic())
            began = await decider
    # Polling would take 30 s (and the NOTIFY safety re-read 15 s): these took well under,
    # however loaded the machine: under half the safety re-read.
    assert seen["approval"] - began < NOTIFY_SAFETY_SECONDS / 2
    assert seen["end"] - began < NOTIFY_SAFETY_SECONDS / 2


@NOTIFY_ONLY
async def test_notify_wakes_an_a2a_stream_too(live_polling_slowly: Live) -> None:
    live = live_polling_slowly
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": user_message("What about order 7?")},
    }  # fmt: skip
    began, states = time.monotonic(), []
    async with (
        httpx.AsyncClient(timeout=60) as http_client,
        http_client.stream("POST", live.url + "/", json=body, headers=live.headers()) as r,
    ):
        async for line in r.aiter_lines():
            if line.startswith("data:") and "statusUpdate" in line:
                states.append(json.loads(line[5:])["result"]["statusUpdate"]["status"]["state"])
    took = time.monotonic() - began
    assert states[-1] == "TASK_STATE_COMPLETED"
    # Each journal commit woke the stream: a poll would have taken 30 s, the safety re-read 15.
    assert took < NOTIFY_SAFETY_SECONDS / 2
