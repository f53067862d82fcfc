"""Tool registry and profile catalogue: built by the worker from explicit lists."""

from collections.abc import Iterable, Mapping

from agentrt.activities.ports import Tool
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.profiles import AgentProfile


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            name = tool.spec.name
            if name in self._tools:
                raise ConfigError(f"duplicate tool name {name!r}")
            self._tools[name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)


class ProfileCatalog:
    def __init__(self, profiles: Mapping[str, AgentProfile], registry: ToolRegistry) -> None:
        for profile in profiles.values():
            missing = [t for t in profile.tools if registry.get(t) is None]
            if missing:
                raise ConfigError(f"profile {profile.name!r} names unknown tools: {missing}")
        self._profiles = dict(profiles)

    def get(self, name: str) -> AgentProfile | None:
        return self._profiles.get(name)

    def names(self) -> list[str]:
        return sorted(self._profiles)
