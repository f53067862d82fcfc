"""The MCP server when what a run needs is away: no worker begins the run, or Temporal is
cut. The call is an MCP error the client can retry (-32004, the HTTP API's error type),
naming no address; the same call sent again under its idempotency key once Temporal is
back is one run."""

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from sqlalchemy.engine import make_url
from temporalio.client import Client

from agentrt.api.mcp.errors import UNAVAILABLE
from agentrt.api.settings import ApiSettings
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._proxy import FlakyProxy
from tests.api.conftest import _serve
from tests.api.mcp_helpers import mcp_client, text
from tests.api.ops_helpers import LOOKUP, http, lonely_api, name, token

IDEMPOTENCY = "agentrt/idempotency_key"


@pytest.fixture
def proxy(client: Client) -> Iterator[FlakyProxy]:
    host, port = client.service_client.config.target_host.rsplit(":", 1)
    opened = FlakyProxy(host, int(port))
    opened.start()
    yield opened
    opened.close()


async def test_no_worker_is_unavailable_naming_the_queue(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        secret = token(live, name("mcp-lonely"), "runs:start", "runs:read", profiles=["helper"])
        async with mcp_client(live, secret) as mcp:
            with pytest.raises(MCPError) as caught:
                await mcp.call_tool("helper", {"prompt": LOOKUP})
    error = caught.value
    assert error.code == UNAVAILABLE and error.data == {"type": "no_worker"}
    assert f"no worker is polling task queue {lonely!r}" in error.message


async def test_temporal_cut_is_unavailable_then_the_retry_is_one_run(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources, proxy: FlakyProxy
) -> None:
    settings = a2a_settings.replace(
        temporal={"address": f"127.0.0.1:{proxy.port}", "start_timeout_seconds": 3.0}
    )
    # The app connects through the proxy at start-up; the worker keeps the suite's client.
    async with _serve(client, settings, a2a_parts, inject=False) as live:
        secret = token(live, name("mcp-cut"), "runs:start", "runs:read", profiles=["typed"])
        key = {IDEMPOTENCY: f"cut-{uuid.uuid4().hex}"}
        prompt = {"prompt": "the typed total of order 1042"}
        async with mcp_client(live, secret) as mcp:
            proxy.cut()
            with pytest.raises(MCPError) as caught:
                await mcp.call_tool("typed", prompt, meta=key)
            proxy.restore()
            for _ in range(10):  # as a client does: again while the server says unavailable
                try:
                    done = await mcp.call_tool("typed", prompt, meta=key)
                    break
                except MCPError as again:
                    assert again.code == UNAVAILABLE, again
                    await asyncio.sleep(1.0)
        async with http(live, secret) as api:
            runs = (await api.get("/runs")).json()["runs"]
    error = caught.value
    assert error.code == UNAVAILABLE and error.data == {"type": "temporal_unavailable"}
    assert str(proxy.port) not in error.message and "127.0.0.1" not in error.message
    assert done.structured_content == {"order_id": "1042", "total_cents": 4999}, text(done)
    assert [r["status"] for r in runs] == ["COMPLETED"]


@pytest.mark.skipif(
    backend() != "postgres", reason="SQLite is a file opened in-process: nothing to cut"
)
async def test_a_token_that_cannot_be_checked_is_503_naming_no_address(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    url = make_url(a2a_settings.database.resolved_url())
    database = FlakyProxy(url.host or "127.0.0.1", url.port or 5432)
    database.start()
    try:
        through = url.set(host="127.0.0.1", port=database.port)
        settings = a2a_settings.replace(
            database={"url": through.render_as_string(hide_password=False)}
        )
        async with _serve(client, settings, a2a_parts) as live:
            secret = token(live, name("mcp-db"), "runs:start", profiles=["typed"])  # not proxied
            database.cut()
            async with httpx.AsyncClient(timeout=60) as raw:
                reply = await raw.post(
                    live.url + "/mcp",
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Authorization": f"Bearer {secret}",
                             "Accept": "application/json, text/event-stream"},
                )  # fmt: skip
    finally:
        database.close()
    assert reply.status_code == 503, reply.text
    assert reply.json()["error"]["type"] == "store_unavailable"
    assert reply.headers["retry-after"] == "1"
    assert str(database.port) not in reply.text and "Traceback" not in reply.text
