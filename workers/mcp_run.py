"""The worker's MCP servers while it runs (the servers file's and the profiles'): each
listed once at start, its tools handed to the worker's registry; one that is down is
listed again with backoff until it answers (activities/toolbox/mcp_servers.py). The mcp
SDK (with its HTTP server stack) is ~30 MB of worker RSS: imported only when a server is
configured."""

import logging
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from agentrt.core.settings import Settings
from agentrt.workers.compose import WorkerResources
from agentrt.workers.loaded import loaded_lines, log_loaded
from agentrt.workers.metrics import mcp_gauge

if TYPE_CHECKING:
    from agentrt.activities.toolbox.mcp_servers import McpServers
    from agentrt.activities.toolbox.remote_agents import RemoteAgents

logger = logging.getLogger("workers")


class ServedMcp:
    def __init__(self, settings: Settings, resources: WorkerResources) -> None:
        self._settings = settings
        self._resources = resources
        self._servers: McpServers | None = None
        self._agents: RemoteAgents | None = None

    async def open(self) -> None:
        """List every server; hand the tools of those up to the registry, check the
        profiles against them (a tool a listed server lacks is a ConfigError, as at any
        start), and keep listing the ones down."""
        resources = self._resources
        if resources.mcp_servers:
            from agentrt.activities.toolbox.mcp_config import McpConfig
            from agentrt.activities.toolbox.mcp_servers import McpServers

            servers = McpServers(
                McpConfig(servers=resources.mcp_servers),
                retry_max_seconds=self._settings.worker.mcp_retry_max_seconds,
            )
            self._servers = servers
            await servers.open()
            for name, tools in servers.boxes():
                resources.add_tools(name, tools)
        await self._open_agents()
        if resources.catalog is not None and (resources.mcp_servers or resources.remote_agents):
            resources.catalog.check()
        if self._servers is not None:
            self._servers.retry(resources.add_tools)
        if self._agents is not None:
            self._agents.retry(resources.add_tools)
        if resources.registry is not None:
            loaded = loaded_lines(resources.registry, self.status(), self.down(),
                                  resources.provider_names, resources.profile_names)  # fmt: skip
            log_loaded(loaded)

    async def _open_agents(self) -> None:
        """Fetch each remote agent's card (activities/toolbox/remote_agents.py); hand the
        skills of those up (and pinned) to the registry."""
        resources = self._resources
        if not resources.remote_agents:
            return
        from agentrt.activities.toolbox.remote_agents import opened_agents

        agents = opened_agents(resources.remote_agents, self._settings)
        self._agents = agents
        await agents.open()
        for name, tools in agents.boxes():
            resources.add_tools(name, tools)

    def status(self) -> dict[str, bool]:
        """Each MCP server (the `agentrt_mcp_server_up` gauge and the loaded line)."""
        return {} if self._servers is None else self._servers.status()

    def down(self) -> dict[str, str]:
        down = {} if self._servers is None else self._servers.down()
        return down | ({} if self._agents is None else self._agents.down())

    def gauge(self, registry: CollectorRegistry) -> None:
        """`agentrt_mcp_server_up{server}`, when there are servers."""
        if self._servers is not None:
            mcp_gauge(registry, self.status)

    async def close(self) -> None:
        if self._servers is not None:
            await self._servers.close()
        if self._agents is not None:
            await self._agents.close()
