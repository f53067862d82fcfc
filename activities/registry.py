"""Tool registry and profile catalogue: built by the worker from explicit lists."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agentrt.activities.ports import Tool
from agentrt.contracts.agents import check_agents, delegation_effect
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.plan import checked_attempt_seconds
from agentrt.contracts.profiles import Profile, Reach

LOOSE = "(ungrouped)"  # the group of tools given without a toolbox


class ToolRegistry:
    """Tools by name, each in one group (its toolbox). A name two groups define is an error.

    A `pending` group is a toolbox known to exist whose tools are not known yet (an MCP
    server that was down at start): it has no tools until `add_group` gives them, and a
    profile may name it, or a tool `<group>.<name>` of it, without being refused."""

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        groups: Mapping[str, Iterable[Tool]] | None = None,
        pending: Iterable[str] = (),
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self._owner: dict[str, str] = {}
        self._groups: dict[str, list[str]] = {}
        # Groups whose tools were not known at construction (MCP servers, listed when the
        # worker runs, and retried while down): a tool named in them that no tool answers
        # to is left out of a run's plan (not offered), never refused at a run's start.
        self.late = frozenset(pending)
        self.listed: set[str] = set()  # late groups whose tools `add_group` gave
        for group, members in [(LOOSE, tools), *(groups or {}).items()]:
            for tool in members:
                self._add(group, tool)
        for group in self.late:
            self._groups.setdefault(group, [])

    def add_group(self, group: str, tools: Iterable[Tool]) -> None:
        """The tools of a pending group, now known: offered to runs that begin from now. All
        or none: a name another group has is a ConfigError before any is added."""
        members = list(tools)
        clash = sorted(n for t in members if (n := getattr(t.spec, "name", None)) in self._tools)
        if clash:
            raise ConfigError(f"toolbox {group!r} names tools other toolboxes have: {clash}")
        for tool in members:
            self._add(group, tool)
        self.listed.add(group)

    def pending(self, name: str) -> bool:
        """Whether `name`, a toolbox or a `<toolbox>.<tool>`, is of a group pending at start."""
        return name in self.late or name.partition(".")[0] in self.late

    def _add(self, group: str, tool: Tool) -> None:
        spec = getattr(tool, "spec", None)
        name = getattr(spec, "name", None)
        if not isinstance(name, str) or not callable(tool):
            raise ConfigError(f"toolbox {group!r} holds {tool!r}, which is not a tool")
        try:  # a declared attempt bound (a class attribute is checked nowhere else)
            checked_attempt_seconds(getattr(tool, "attempt_seconds", None), name)
        except ValueError as exc:
            raise ConfigError(f"toolbox {group!r}: {exc}") from None
        if name in self._tools:
            where = (
                f"both toolboxes {self._owner[name]!r} and {group!r}"
                if self._owner[name] != group
                else f"toolbox {group!r} twice"
            )
            raise ConfigError(f"tool name {name!r} is defined by {where}")
        self._tools[name] = tool
        self._owner[name] = group
        self._groups.setdefault(group, []).append(name)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def owner(self, name: str) -> str | None:
        """The toolbox a tool belongs to (None for an ungrouped or unknown tool)."""
        group = self._owner.get(name)
        return None if group == LOOSE else group

    def group(self, name: str) -> list[str] | None:
        """The tool names of a toolbox, in its order; None if no such toolbox is loaded."""
        members = self._groups.get(name)
        return None if members is None or name == LOOSE else list(members)

    def groups(self) -> list[str]:
        return sorted(g for g in self._groups if g != LOOSE)


class ProfileCatalog:
    """Profiles with their tools resolved: `tools` plus every tool of each named toolbox.
    Checked once at start (an unknown tool or toolbox is a ConfigError), resolved again at
    each `get` while a toolbox is pending, so a run begun after its server came up is
    offered its tools."""

    def __init__(self, profiles: Mapping[str, Profile], registry: ToolRegistry) -> None:
        self._registry = registry
        self._raw = dict(profiles)
        self._profiles = {name: resolve(p, registry) for name, p in profiles.items()}
        # Children: each known, none a tool's name, no cycle (the name and closest valid).
        check_agents(self._profiles, registry.names())

    def get(self, name: str) -> Profile | None:
        raw = self._raw.get(name)
        if raw is not None and self._registry.late:
            return resolve(raw, self._registry)  # a few list operations: cheap
        return self._profiles.get(name)

    def check(self) -> None:
        """At the worker's start, once the late toolboxes that answered have listed their
        tools: a tool one of them lacks is a ConfigError, as for any toolbox."""
        reg = self._registry
        for profile in self._raw.values():
            lacking = [
                t for t in profile.tools
                if reg.get(t) is None and t.partition(".")[0] in reg.listed
            ]  # fmt: skip
            if lacking:
                raise ConfigError(
                    f"profile {profile.name!r} names unknown tools: {lacking}"
                    f" (loaded toolboxes: {reg.groups() or 'none'})"
                )

    def names(self) -> list[str]:
        return sorted(self._profiles)

    def reach(self, name: str) -> Reach | None:
        """What a run of profile `name` may do, the strongest effect of its tools and of
        the agents it delegates to (as a delegation to it is classed); None while a
        toolbox of any of them has not listed its tools (their effects are not known)."""
        if name not in self._raw or self._unlisted(name):
            return None
        return _REACH[self.agent_effect(name, self._registry)]

    def _unlisted(self, name: str) -> bool:
        seen: set[str] = set()
        pending = [name]
        while pending:
            current = pending.pop()
            raw = self._raw.get(current)
            if current in seen or raw is None:
                continue
            seen.add(current)
            boxes = [*raw.toolboxes, *(t.partition(".")[0] for t in raw.tools)]
            if any(self._registry.pending(b) and b not in self._registry.listed for b in boxes):
                return True
            pending.extend(raw.agents)
        return False

    def agent_effect(self, name: str, registry: ToolRegistry) -> ToolEffect:
        """The effect class of a delegation to the child `name`: the strongest among its
        tools and its own children's (contracts/agents.py)."""
        resolved = {n: p for n in self._raw if (p := self.get(n)) is not None}
        return delegation_effect(name, resolved, lambda t: _effect(registry, t))


_REACH: dict[ToolEffect, Reach] = {
    ToolEffect.READ_ONLY: "read_only",
    ToolEffect.IDEMPOTENT_WRITE: "idempotent",
    ToolEffect.NON_IDEMPOTENT_WRITE: "writes",
}


def _effect(registry: ToolRegistry, name: str) -> ToolEffect:
    tool = registry.get(name)
    return ToolEffect.resolve(None) if tool is None else tool.effect


def resolve(profile: Profile, registry: ToolRegistry) -> Profile:
    """The profile with `tools` resolved; a tool of a pending toolbox is left out (not
    offered while its server is down), an unknown one is a ConfigError."""
    unknown_boxes = [b for b in profile.toolboxes if registry.group(b) is None]
    if unknown_boxes:
        raise ConfigError(
            f"profile {profile.name!r} names unknown toolboxes: {unknown_boxes}"
            f" (loaded: {registry.groups() or 'none'})"
        )
    absent = [t for t in profile.tools if registry.get(t) is None]
    missing = [t for t in absent if not registry.pending(t)]
    if missing:
        raise ConfigError(
            f"profile {profile.name!r} names unknown tools: {missing}"
            f" (loaded toolboxes: {registry.groups() or 'none'})"
        )
    names = [t for t in profile.tools if t not in absent]
    for box in profile.toolboxes:
        names.extend(registry.group(box) or [])
    return profile.model_copy(update={"tools": list(dict.fromkeys(names))})


def model_queue_name(prefix: str, provider: str) -> str:
    return f"{prefix}-{provider}"


@dataclass(frozen=True)
class Routes:
    """Which task queue a run's model and tool calls go to; written into the run plan at
    begin, so a run keeps its queues through replays and configuration changes."""

    model_prefix: str = ""
    tool_queue: str = ""
    toolbox_queues: Mapping[str, str] = field(default_factory=dict)

    def model(self, model_ref: str) -> str | None:
        provider = model_ref.partition(":")[0]
        return model_queue_name(self.model_prefix, provider) if self.model_prefix else None

    def tool(self, toolbox: str | None) -> str | None:
        if toolbox is not None and toolbox in self.toolbox_queues:
            return self.toolbox_queues[toolbox]
        return self.tool_queue or None
