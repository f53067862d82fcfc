"""The worker's MCP servers, each a toolbox that may be down: a server that cannot be
listed at start does not stop the worker (a fleet must restart while a tool server is
away). Its tools are not offered until it answers; a task lists it again with backoff and
hands its tools to the worker once it does (`on_up`), without a restart.

A mistake in the servers file about a server that answers (an `effects` entry naming a
tool it lacks, a probe that is not a read) is still a ConfigError at start: that is the
file's fault, not an outage. Found on a server that comes up later, it is logged and the
server stays down (its `reason` says why).
"""

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp.types import Tool as McpToolSpec

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.late import LateSources
from agentrt.activities.toolbox.mcp import tools_of
from agentrt.activities.toolbox.mcp_config import McpConfig, McpServer
from agentrt.activities.toolbox.mcp_session import McpConnection
from agentrt.contracts.errors import ConfigError

logger = logging.getLogger("agentrt.mcp")


@dataclass
class ServerState:
    server: McpServer
    conn: McpConnection
    tools: list[Tool] = field(default_factory=list)
    specs: list[McpToolSpec] = field(default_factory=list)
    reason: str | None = "not listed yet"  # None: up
    stuck: bool = False  # its tools clash with another toolbox's: no use listing it again

    @property
    def up(self) -> bool:
        return self.reason is None


class McpServers(LateSources[ServerState]):
    """Every server of the servers file: `await open()` lists each once, `retry(on_up)`
    keeps listing the down ones, `close()` ends both."""

    what = "MCP server"

    def __init__(
        self,
        config: McpConfig | None,
        *,
        retry_max_seconds: float = 30.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        super().__init__(
            {
                s.name: ServerState(s, McpConnection(s, s.resolved(env)))
                for s in (config.servers if config is not None else [])
            },
            retry_max_seconds,
        )
        self._logger = logger

    async def _list(self, state: ServerState, *, at_start: bool) -> bool:
        name = state.server.name
        try:
            specs = await state.conn.list_tools()
            tools = tools_of(state.conn, state.server, specs)  # ConfigError: the file's fault
        except ConfigError as exc:
            if at_start:
                raise
            state.reason = str(exc)
            logger.error("MCP server %s answered, but %s; it stays down", name, exc)
            return False
        except Exception as exc:  # down, refusing, not speaking MCP: retried
            state.reason = f"{type(exc).__name__}: {exc}"
            if at_start:
                logger.warning(
                    "MCP server %s is down (%s): its tools are offered once it answers",
                    name, state.reason,
                )  # fmt: skip
            return False
        state.specs, state.tools, state.reason = specs, tools, None
        if not at_start:
            logger.info("MCP server %s is up: %d tools", name, len(tools))
        return True

    def states(self) -> list[ServerState]:
        return list(self._states.values())

    async def _close(self, state: ServerState) -> None:
        await state.conn.close()
