"""What the profiles a worker serves hold besides names (contracts/held.py): their
toolboxes, tools and MCP servers, gathered for the worker to load as it loads the
toolboxes of AGENTRT_TOOLBOXES and the servers of AGENTRT_MCP_SERVERS_FILE. The same
object held by two profiles is loaded once; two different ones of one name clash."""

import inspect
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TypeVar

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.box import Toolbox
from agentrt.activities.toolbox.decorator import FunctionTool, tool
from agentrt.activities.toolbox.mcp_config import McpServer
from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.store.db.open import MIGRATE_COMMAND

S = TypeVar("S", McpServer, RemoteAgent)
_KIND = {McpServer: "MCP servers", RemoteAgent: "remote agents"}


@dataclass
class Held:
    toolboxes: list[Toolbox] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)  # of no toolbox
    mcp_servers: list[McpServer] = field(default_factory=list)
    remote_agents: list[RemoteAgent] = field(default_factory=list)

    @property
    def mcp_names(self) -> list[str]:
        return [s.name for s in self.mcp_servers]


def held_by(profiles: Iterable[Profile]) -> Held:
    """Every object the profiles hold, each once (by identity; a tool by name)."""
    held = Held()
    tools: dict[str, tuple[object, Tool]] = {}
    for profile in profiles:
        for item in profile.held():
            if isinstance(item, Toolbox):
                if all(item is not b for b in held.toolboxes):
                    held.toolboxes.append(item)
            elif isinstance(item, McpServer):
                held.mcp_servers = merged_servers(held.mcp_servers, [item], "profiles")
            elif isinstance(item, RemoteAgent):
                held.remote_agents = merged_servers(held.remote_agents, [item], "profiles")
            else:
                made = as_tool(item)
                seen = tools.get(made.spec.name)
                if seen is not None and seen[0] is not item:
                    raise ConfigError(f"profiles hold two tools named {made.spec.name!r}")
                tools[made.spec.name] = (item, made)
    held.tools = [made for _, made in tools.values()]
    return held


def as_tool(item: object) -> Tool:
    """A tool a profile holds: a plain function becomes a `@tool` (a non-idempotent write
    by default: fenced and approval-bound)."""
    if inspect.isfunction(item):
        return tool(item)
    return item  # type: ignore[return-value]  # contracts/held.py checked it names a tool


def on_pool(item: Tool, pool: Executor) -> Tool:
    """A `@tool` function's sync calls on the worker's tool pool (as Toolbox.build does)."""
    return item.on_executor(pool) if isinstance(item, FunctionTool) else item


def merged_servers(first: Iterable[S], then: Iterable[S], where: str) -> list[S]:
    """Both lists of MCP servers (or of remote agents); one name twice is a ConfigError
    unless both say the same."""
    out = {s.name: s for s in first}
    for server in then:
        seen = out.get(server.name)
        if seen is not None and seen != server:
            raise ConfigError(
                f"two different {_KIND[type(server)]} are named {server.name!r} (in the {where})"
            )
        out[server.name] = server
    return list(out.values())


def worker_seal_keys(settings: Settings) -> str:
    """The seal keys the worker's store opens with. The worker reads them and makes none:
    the key is made with the schema, by `agentrt migrate`."""
    try:
        return settings.read_seal_keys()
    except ConfigError as exc:
        raise ConfigError(f"{exc}; `{MIGRATE_COMMAND}` makes the key file") from None
