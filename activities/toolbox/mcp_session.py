"""One persistent MCP client session per server, reopened when it breaks.

Why persistent and not a session per call: a stdio server is a child process, so a session
per call would spawn (and initialise) a process per tool call; HTTP would pay a handshake
per call. One session serves concurrent calls (requests are multiplexed by id).

The SDK's transports are anyio task groups that must be entered and left by the same task,
so each session lives in an owner task of its own; activities only send requests through
it. When the session breaks (process exit, connection loss) the next call opens a new one.
"""

import asyncio
import logging
import sys
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult
from mcp.types import Tool as McpToolSpec

from agentrt.activities.ports import ToolFailure
from agentrt.activities.toolbox.mcp_config import McpServer

logger = logging.getLogger(__name__)

# Client-side codes: the SDK's own verdicts, not an answer from the server.
_LOCAL_CODES = {CONNECTION_CLOSED, REQUEST_TIMEOUT}
CONNECT_TIMEOUT_SECONDS = 15.0


class SentAndLost(Exception):
    """The request was sent but no answer came (timeout, connection lost): outcome unknown."""


class McpConnection:
    def __init__(self, server: McpServer, resolved: dict[str, str]) -> None:
        """`resolved`: what the config takes from the environment, read at start: the HTTP
        headers, or the stdio child's whole environment."""
        self.server = server
        self._resolved = resolved
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.server.name

    async def _open(self) -> Client:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def own() -> None:
            try:
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(
                        Client(self._transport(stack), cache=None)
                    )
                    ready.set_result(client)
                    await stop.wait()
            except BaseException as exc:  # the session's end, expected or not
                if not ready.done():
                    ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError())
                elif not stop.is_set():
                    logger.info("MCP server %s: session ended (%s)", self.name, type(exc).__name__)
                if not isinstance(exc, Exception):
                    raise
            finally:
                if self._owner is asyncio.current_task():
                    self._client = None

        self._stop = stop
        self._owner = asyncio.create_task(own(), name=f"mcp-{self.name}")
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), CONNECT_TIMEOUT_SECONDS)
        except BaseException:
            await self._drop()
            raise
        self._client = client
        return client

    def _transport(self, stack: AsyncExitStack) -> Any:
        s = self.server
        if s.command is not None:  # stdio (McpServer has a command or a url)
            params = StdioServerParameters(
                command=s.command, args=s.args, env=self._resolved, cwd=s.cwd
            )
            return stdio_client(params, errlog=sys.stderr)
        # The MCP layer times each call (timeout_seconds); a server may hold a stream open.
        http = httpx2.AsyncClient(headers=self._resolved, timeout=httpx2.Timeout(30.0, read=300.0))
        stack.push_async_callback(http.aclose)
        assert s.url is not None
        return streamable_http_client(s.url, http_client=http)

    async def _drop(self) -> None:
        owner, self._owner, self._client = self._owner, None, None
        if self._stop is not None:
            self._stop.set()
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(owner, 10.0)
            except BaseException:  # a transport that will not close is abandoned
                owner.cancel()

    async def client(self, *, fresh: bool = False) -> Client:
        """The live session, opened (or reopened) on demand. Raises ToolFailure when the
        server cannot be reached: nothing was sent."""
        async with self._lock:
            if fresh or self._owner is None or self._owner.done():
                await self._drop()
                try:
                    return await self._open()
                except Exception as exc:
                    logger.info("MCP server %s unreachable: %s", self.name, type(exc).__name__)
                    raise ToolFailure(
                        f"the MCP server {self.name!r} could not be reached; nothing was sent",
                        reason="unreachable",
                    ) from None
            assert self._client is not None
            return self._client

    async def list_tools(self) -> list[McpToolSpec]:
        client = await self.client()
        tools: list[McpToolSpec] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

    async def probe(self) -> None:
        """Show the session answers right now, reopening it once if not; ToolFailure when it
        cannot. A write calls this first, so 'down' is told apart from 'sent and lost'."""
        for fresh in (False, True):
            client = await self.client(fresh=fresh)
            try:
                await asyncio.wait_for(client.list_tools(), self.server.timeout_seconds)
                return
            except Exception as exc:
                logger.info("MCP server %s probe failed: %s", self.name, type(exc).__name__)
        raise ToolFailure(
            f"the MCP server {self.name!r} is not answering; nothing was sent",
            reason="unreachable",
        )

    async def call(
        self, tool: str, arguments: dict[str, Any], meta: dict[str, Any] | None
    ) -> CallToolResult:
        """One tools/call on the current session. Raises SentAndLost when the request went
        out and no answer came, ToolFailure when the server answered with a protocol error."""
        client = await self.client()
        try:
            return await client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.server.timeout_seconds,
                meta=meta,  # type: ignore[arg-type]
            )
        except MCPError as exc:
            if exc.code in _LOCAL_CODES:
                if exc.code == CONNECTION_CLOSED:
                    await self._forget(client)
                raise SentAndLost("timed out" if exc.code == REQUEST_TIMEOUT else "lost") from None
            raise ToolFailure(f"the server refused the call: {exc.error.message}",
                              reason="rejected") from None  # fmt: skip
        except (OSError, httpx2.HTTPError, EOFError) as exc:
            await self._forget(client)
            raise SentAndLost(type(exc).__name__) from None

    async def _forget(self, client: Client) -> None:
        async with self._lock:
            if self._client is client:
                await self._drop()

    async def close(self) -> None:
        async with self._lock:
            await self._drop()
