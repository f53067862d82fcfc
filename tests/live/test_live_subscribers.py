"""Fifty live subscribers on one run do not hold up its approval: they read the store beside
the run, and take no Temporal Update slot, query or signal (a run allows 10 Updates in
flight; subscribers riding on Updates starved an approval into RESOURCE_EXHAUSTED). The
proof is structural (the approval is taken while all fifty follow, and the run's history
holds only the runtime's own Updates), not a stopwatch: on a shared 2-core CI machine an
approval's wall time beside fifty streams varied from 0.07 s to over 6 s with the load."""

import asyncio

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, Frame, frames, http, name, start, token, wait_status

SUBSCRIBERS = 50


async def _subscribe(c: httpx.AsyncClient, run_id: str, ready: asyncio.Event) -> list[Frame]:
    got: list[Frame] = []
    async with c.stream("GET", f"/runs/{run_id}/live") as reply:
        assert reply.status_code == 200
        async for f in frames(reply):
            got.append(f)
            if f.event == "approval_requested":
                ready.set()
    return got


async def _waiting(c: httpx.AsyncClient) -> tuple[str, str]:
    run_id = (await start(c, "helper", REFUND))["run_id"]
    waiting = await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
    return run_id, waiting["pending_approval"]["turn_digest"]


async def _approve(c: httpx.AsyncClient, run_id: str, digest: str) -> None:
    reply = await c.post(
        f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
    )
    assert reply.status_code == 200, reply.text


async def test_fifty_subscribers_do_not_delay_an_approval(live: Live, client: Client) -> None:
    who = name("alice")
    secret = token(live, who, "runs:start", "runs:read", "runs:decide")
    limits = httpx.Limits(max_connections=SUBSCRIBERS + 10)
    async with http(live, secret) as c:
        run_id, digest = await _waiting(c)
        async with httpx.AsyncClient(
            base_url=live.url, headers=c.headers, timeout=60, limits=limits
        ) as subs:
            readies = [asyncio.Event() for _ in range(SUBSCRIBERS)]
            followers = [asyncio.create_task(_subscribe(subs, run_id, r)) for r in readies]
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)
            await _approve(c, run_id, digest)  # taken while all fifty follow the run
            done = await asyncio.wait_for(asyncio.gather(*followers), 30)
    for got in done:
        assert got[-1].event == "end" and got[-1].data["status"] == "COMPLETED"
    # Nothing of the subscribers reached the run's history: its Updates are the runtime's
    # own (the begin, the decision), each once.
    history = await client.get_workflow_handle(run_id).fetch_history()
    updates = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    assert len(updates) == len(set(updates)) <= 2, updates
