"""The MCP server's tests: an `mcp` client (the official package's `Client` over streamable
HTTP) holding an operator token, and a poll of `agentrt_run_status`."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from agentrt.api.mcp.tools import STATUS_TOOL
from tests.api.conftest import Live
from tests.workflows._waiting import until_found


@asynccontextmanager
async def mcp_client(live: Live, secret: str, mode: str = "auto") -> AsyncIterator[Client]:
    """`mode`: "auto" speaks 2026-07-28 to this server (per-request envelopes, no
    session); "legacy" the initialize handshake and a session (2025-11-25)."""
    headers = {"Authorization": f"Bearer {secret}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        transport = streamable_http_client(live.url + "/mcp", http_client=http)
        async with Client(transport, cache=None, mode=mode) as client:
            yield client


def text(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def said(result: CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


async def status_until(
    client: Client, run_id: str, *statuses: str, seconds: float = 30
) -> CallToolResult:
    """`agentrt_run_status` asked until the run is in one of `statuses`."""

    async def in_status() -> CallToolResult | None:
        result = await client.call_tool(STATUS_TOOL, {"run_id": run_id})
        return result if said(result)["status"] in statuses else None

    return await until_found(in_status, f"run {run_id} in {statuses}", seconds)
