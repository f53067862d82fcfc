"""Issue 41, Info: a failed model call's live output is pruned. Each attempt of a call that
failed withdrew its text (a retract row) but kept its rows, sealed, for as long as the run
was kept; only a stored turn pruned them. The run's settle (FAILED or CANCELLED) now
removes them: the run makes no further call, and followers read its end in its event."""

# ruff: noqa: F811

from sqlalchemy import func, select

from agentrt.store.db.tables import LiveRow
from bench.streaming_server import DROP
from tests.api.ops_helpers import http, name, start, token, wait_status
from tests.live.conftest import Serve, serve_streaming  # noqa: F401  (fixture)


async def test_a_run_whose_every_call_failed_keeps_no_live_rows(serve_streaming: Serve) -> None:
    async with serve_streaming(["Partial ", "text ", 0.05, DROP]) as (live, server):
        async with http(live, token(live, name("alice"), "runs:start", "runs:read")) as c:
            run_id = (await start(c, "streamer", "Say it"))["run_id"]
            ended = await wait_status(c, run_id, "FAILED", "COMPLETED", seconds=90)
        with live.parts.ctx.sessions() as s:
            left = s.scalar(
                select(func.count()).select_from(LiveRow).where(LiveRow.run_id == run_id)
            )
    assert ended["status"] == "FAILED" and ended["termination_reason"] == "provider_failed", ended
    assert len(server.bodies) >= 2  # the call was retried, each attempt streaming text
    assert left == 0
