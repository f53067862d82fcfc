"""A model worker in the operator API's process wakes that process's SSE follows when it
publishes (store/live/bell.py through api/wake.py): the first delta does not wait for the
follow's poll. The poll and the token recheck (which also ends a wait) are 30 s here, so
only the wake (or, on PostgreSQL, the NOTIFY of the live table) can bring the delta within
the bound."""

import asyncio
import time

import pytest
from temporalio.client import Client

from agentrt.api.operator import sse
from agentrt.api.settings import ApiSettings
from bench.streaming_server import GATE, streaming
from tests.api.conftest import serving
from tests.api.ops_helpers import frames, http, name, start, token
from tests.live.conftest import streaming_settings

POLL = 30.0


async def test_a_publish_in_this_process_wakes_an_idle_sse_follow(
    client: Client, a2a_settings: ApiSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sse, "TOKEN_RECHECK_SECONDS", POLL)
    # The pause: the follow is idle, waiting, when the first delta is published.
    with streaming([1.0, "Hello ", GATE, "there."]) as (server, url):
        settings = streaming_settings(a2a_settings, url).replace(api={"poll_seconds": POLL})
        async with serving(client, settings) as live:
            async with http(live, token(live, name("alice"), "runs:start", "runs:read")) as c:
                run_id = (await start(c, "streamer", "Say hello"))["run_id"]
                began = time.monotonic()

                async def first_delta() -> str:
                    async with c.stream("GET", f"/runs/{run_id}/live") as reply:
                        async for f in frames(reply):
                            if f.event == "delta":
                                return str(f.data["text"])
                    raise AssertionError("the follow ended without a delta")

                try:
                    assert await asyncio.wait_for(first_delta(), 10.0) == "Hello "
                    waited = time.monotonic() - began
                finally:
                    server.gate.set()
    assert waited < 5.0, f"{waited:.1f} s: the follow waited for its poll"
