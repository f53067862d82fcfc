"""Issue 43 item 2: a remote call is one request. The card is checked against its pin once
per worker process (at its first use), not at each call; a send the remote refuses makes
the card be checked again, and a card that changed is refused with the typed
`card_changed` (nothing made), at that call and every later one. Counted by a proxy (real
HTTP on 127.0.0.1) in front of agentrt's own A2A server in another process."""

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.activities.ports import ToolContext, ToolFailure
from agentrt.activities.toolbox.remote_agent import remote_tools
from agentrt.activities.toolbox.remote_config import RemoteAgent, card_digest
from agentrt.activities.toolbox.remote_http import CARD_PATH, RemoteConnection, canonical
from agentrt.core.outbound import Policy
from agentrt.core.settings import Settings
from tests._db import migrated, scratch_database
from tests.activities._counting import Counting, counting_proxy
from tests.activities._remote import TOKEN, Remote, remote_agentrt

pytestmark = pytest.mark.timeout(120)

ARGS = {"message": "quote for order 1042"}


@pytest_asyncio.fixture
async def remote(
    client: Client, temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> AsyncIterator[Remote]:
    address = temporal_env.client.service_client.config.target_host
    with scratch_database("remote", tmp_path / "remote.db") as url:
        migrated(url)
        async with remote_agentrt(client, address, settings, tmp_path, url) as served:
            yield served


@pytest_asyncio.fixture
async def proxy(remote: Remote) -> AsyncIterator[Counting]:
    async with counting_proxy(remote.url) as counting:
        yield counting


async def _connection(proxy: Counting) -> RemoteConnection:
    """A connection to the remote through the proxy, its card pinned as the operator saw it."""
    async with httpx.AsyncClient(timeout=10) as http:
        seen = (await http.get(f"{proxy.url}/{CARD_PATH}")).json()
    agent = RemoteAgent(name="partner", url=proxy.url,
                        pinned_card_digest=card_digest(canonical(seen)))  # fmt: skip
    proxy.requests.clear()
    return RemoteConnection(agent, TOKEN, Policy.parse("127.0.0.0/8", ""))


def _ctx() -> ToolContext:
    return ToolContext(run_id="r-1", call_id="c-1", idempotency_key=f"k-{uuid.uuid4()}")


async def test_a_call_is_one_request(remote: Remote, proxy: Counting) -> None:
    conn = await _connection(proxy)
    try:
        card = await conn.card()  # the worker's start: the card checked once
        (tool,) = remote_tools(conn, card)
        assert proxy.requests == [("GET", f"/{CARD_PATH}")]
        proxy.requests.clear()
        for n in (1, 2, 3):
            assert "4999" in await tool(ARGS, _ctx())
            assert len(proxy.requests) == n and proxy.sends() == n, proxy.requests
        assert proxy.card_fetches() == 0
        assert remote.tasks() == 3
    finally:
        await conn.close()
    # A connection whose card was not checked yet (the tools made from a card read
    # elsewhere) checks it at its first call only.
    fresh = await _connection(proxy)
    try:
        (first,) = remote_tools(fresh, card)
        proxy.requests.clear()
        await first(ARGS, _ctx())
        await first(ARGS, _ctx())
        assert proxy.card_fetches() == 1 and proxy.sends() == 2, proxy.requests
    finally:
        await fresh.close()


async def test_a_changed_card_is_refused_after_the_failed_send(
    remote: Remote, proxy: Counting
) -> None:
    conn = await _connection(proxy)
    try:
        (tool,) = remote_tools(conn, await conn.card())
        assert "4999" in await tool(ARGS, _ctx())
        proxy.changed = True  # the agent changed behind its pin: the send is refused
        proxy.requests.clear()
        with pytest.raises(ToolFailure) as refused:
            await tool(ARGS, _ctx())
        assert refused.value.reason == "card_changed", refused.value
        assert "changed since it was pinned" in str(refused.value)
        assert proxy.requests == [("POST", proxy.requests[0][1]), ("GET", f"/{CARD_PATH}")]
        # Refused until an operator re-pins it: the next call checks the card, sends nothing.
        proxy.requests.clear()
        with pytest.raises(ToolFailure) as again:
            await tool(ARGS, _ctx())
        assert again.value.reason == "card_changed"
        assert proxy.sends() == 0 and proxy.card_fetches() == 1, proxy.requests
        assert remote.tasks() == 1  # only the call before the change
    finally:
        await conn.close()


async def test_a_streamed_call_is_one_request_and_emits_the_remote_text(
    remote: Remote, proxy: Counting
) -> None:
    """Where the call has a live channel (`ctx.emit`), the send streams (SSE): the remote's
    text is emitted as it comes, the artifacts are the result, still one request."""
    conn = await _connection(proxy)
    try:
        (tool,) = remote_tools(conn, await conn.card())
        proxy.requests.clear()
        shown: list[str] = []

        async def emit(text: str) -> None:
            shown.append(text)

        ctx = ToolContext(run_id="r-1", call_id="c-1", idempotency_key=f"k-{uuid.uuid4()}",
                          emit=emit)  # fmt: skip
        result = await tool(ARGS, ctx)
        assert "4999" in result and "4999" in "".join(shown), (result, shown)
        assert len(proxy.requests) == 1 and proxy.sends() == 1, proxy.requests
    finally:
        await conn.close()
