"""A revoked token's open follow streams end within 2 s of the revocation, each of them,
though a token's streams share one recheck of it (api/operator/feeds.py TokenChecks): the
shared answer's age plus a stream's own recheck interval stays under that bound.

The streams of each token follow two runs whose polls wake out of step, and the tokens are
revoked at phases a fraction of a wake apart: with a 1 s shared answer on top of a 2 s
recheck, some stream took the stale answer after its revocation and lived ~3 s."""

import asyncio
import time

from agentrt.store.security.principals import PrincipalStore
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, frames, http, name, start, token, wait_status

SSE = {"Accept": "text/event-stream"}
BOUND = 2.0  # seconds from the revocation to a stream's end, as before the shared check
TOKENS = 4  # revoked PHASE apart: one lands in any window of the wake period that long
PHASE = 0.5


async def _waiting_run(live: Live, starter: str) -> str:
    async with http(live, starter) as c:
        run_id = str((await start(c, "helper", REFUND))["run_id"])
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")  # its streams stay open
    return run_id


async def test_every_open_follow_of_a_revoked_token_ends_within_two_seconds(live: Live) -> None:
    starter = token(live, name("alice"), "runs:start", "runs:read", "runs:cancel")
    runs = [await _waiting_run(live, starter), await _waiting_run(live, starter)]
    store = PrincipalStore(live.parts.ctx)
    tokens = [store.create(name("watcher"), ["runs:read-all"]) for _ in range(TOKENS)]
    ended: dict[int, list[tuple[float, list[str]]]] = {k: [] for k in range(TOKENS)}

    async def follow(k: int, run_id: str) -> None:
        seen: list[str] = []
        async with http(live, tokens[k][1]) as api:
            async with api.stream("GET", f"/runs/{run_id}/events", headers=SSE) as reply:
                assert reply.status_code == 200
                async for f in frames(reply):
                    seen.append(f.event)
        ended[k].append((time.monotonic(), seen))

    try:
        streams = [asyncio.create_task(follow(k, runs[0])) for k in range(TOKENS)]
        await asyncio.sleep(0.7)  # the second run's poll wakes out of step with the first's
        streams += [asyncio.create_task(follow(k, runs[1])) for k in range(TOKENS)]
        await asyncio.sleep(4.5)  # every stream has rechecked its token
        assert not any(s.done() for s in streams)
        revoked_at = []
        for info, _ in tokens:
            revoked_at.append(time.monotonic())
            assert store.revoke(info.id)
            await asyncio.sleep(PHASE)
        await asyncio.wait_for(asyncio.gather(*streams), 15.0)
    finally:
        async with http(live, starter) as c:
            for run_id in runs:
                await c.post(f"/runs/{run_id}/cancel", json={"reason": "test over"})
    late = [round(at - revoked_at[k], 2) for k in range(TOKENS) for at, _ in ended[k]]
    assert max(late) < BOUND, f"streams ended {late} s after their token's revocation"
    assert all(seen[-1] == "error" and "end" not in seen for k in ended for _, seen in ended[k])
