"""Issue 40 item 1: a follow never skips and never repeats an event, whatever order events
commit in. Sequence 2 commits before sequence 1 (a parallel call, a reconciled write's
`tool` event) while a follower is attached, and a second follower resumes with the
`Last-Event-ID` the first had before the late commit: both see every event once, in commit
order; their ids are positions. Each kind of follower: SSE `/events` and `/live`,
`AgentRuntime.follow()` in process and through the API. The events are written through the
store's own write paths (tests/_late_events.py), against the live API and the suite's
database (both backends)."""

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

import pytest

from agentrt.contracts.views import EventView
from agentrt.starter.remote import api_session
from agentrt.store.db.context import StoreContext
from tests._late_events import COMMITTED, begin, settle, tool_step
from tests.api.conftest import Live
from tests.api.ops_helpers import Frame, frames, http, name, token

SSE = {"Accept": "text/event-stream"}
T = TypeVar("T")


async def _next(items: AsyncIterator[T]) -> T:
    """The follower's next item, or the test fails saying it never came."""
    return await asyncio.wait_for(anext(items), 30)


async def _rest(items: AsyncIterator[T]) -> list[T]:
    async def drain() -> list[T]:
        return [item async for item in items]

    return await asyncio.wait_for(drain(), 30)


async def _late_steps(ctx: StoreContext, run_id: str, followed: AsyncIterator[T]) -> list[T]:
    """All `followed` yields while the run's steps commit out of order (2 before 1, then the
    settle at 3), each step written only once the follower has seen the one before."""
    seen = [await _next(followed)]
    await asyncio.to_thread(tool_step, ctx, run_id, 2)
    seen.append(await _next(followed))
    await asyncio.to_thread(tool_step, ctx, run_id, 1)
    await asyncio.to_thread(settle, ctx, run_id, 3)
    return seen + await _rest(followed)


def _sequences(got: list[Frame]) -> list[int]:
    assert got[-1].event == "end", got[-1]
    return [f.data["sequence"] for f in got[:-1]]


@pytest.mark.parametrize("path", ["events", "live"])
async def test_an_sse_follower_and_a_resumed_one_see_a_late_event_once(
    live: Live, path: str
) -> None:
    who, ctx = name("lena"), live.parts.ctx
    run_id = begin(ctx, who)
    async with http(live, token(live, who, "runs:read")) as c:
        async with c.stream("GET", f"/runs/{run_id}/{path}", headers=SSE) as reply:
            assert reply.status_code == 200
            attached = frames(reply)
            seen = [await _next(attached)]
            await asyncio.to_thread(tool_step, ctx, run_id, 2)
            seen.append(await _next(attached))
            resume_at = seen[-1].raw_id  # what a client that dropped here reconnects with
            await asyncio.to_thread(tool_step, ctx, run_id, 1)  # the lower sequence, late
            await asyncio.to_thread(settle, ctx, run_id, 3)
            seen += await _rest(attached)
        assert resume_at is not None
        async with c.stream(
            "GET", f"/runs/{run_id}/{path}", headers={**SSE, "Last-Event-ID": resume_at}
        ) as reply:
            resumed = await _rest(frames(reply))
        page = (await c.get(f"/runs/{run_id}/events")).json()["events"]
    assert _sequences(seen) == COMMITTED  # none skipped, none twice, in commit order
    assert _sequences(resumed) == [1, 3]
    # Each frame's id is its event's position (and a live frame's, `<position>:<live id>`).
    ids = [f.raw_id for f in seen[:-1]]
    positions = [str(e["position"]) for e in page]
    assert [i.split(":")[0] for i in ids if i] == positions == ["0", "1", "2", "3"]
    assert [e["sequence"] for e in page] == COMMITTED  # the JSON page in commit order too


async def test_a_follow_in_process_sees_a_late_event_once(live: Live) -> None:
    ctx = live.parts.ctx
    run_id = begin(ctx, name("mia"))
    seen = await _late_steps(ctx, run_id, aiter(live.runtime.follow(run_id)))
    assert all(isinstance(e, EventView) for e in seen)
    assert [e.sequence for e in seen if isinstance(e, EventView)] == COMMITTED
    assert [e.position for e in seen if isinstance(e, EventView)] == [0, 1, 2, 3]


async def test_a_follow_through_the_api_sees_a_late_event_once(live: Live) -> None:
    who, ctx = name("nils"), live.parts.ctx
    run_id = begin(ctx, who)
    async with api_session(live.url, token(live, who, "runs:read")) as remote:
        seen = await _late_steps(ctx, run_id, aiter(remote.follow(run_id)))
        events = [e for e in seen if isinstance(e, EventView)]
        assert [e.sequence for e in events] == COMMITTED
        # The one-shot read pages by position too (its `next_after`).
        listed = await remote.events(run_id, after_position=events[1].position)
    assert [e.sequence for e in listed] == [1, 3]
