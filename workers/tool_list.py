"""`agentrt-worker --list-tools`: every tool this worker would load, before any run, read
the way the worker reads it (the toolboxes of AGENTRT_TOOLBOXES and the entry points, the
MCP servers of AGENTRT_MCP_SERVERS_FILE, the profiles of AGENTRT_PROFILES_FILE). For each:
its effect, where the effect came from, whether approval binds it in each profile that
offers it, and its reconcile probe. Nothing is written: no migration, no registration.

Where an effect comes from:
- `declared`: the tool says so (`@tool(effect=...)`, a TypedTool's `declared_effect`, a
  tool class's own `effect`);
- `default`: it says nothing, so it is a NON_IDEMPOTENT_WRITE (fail closed); for an MCP
  tool, also when the server gives no annotations or the file says not to trust them;
- `MCP annotation`: the server's readOnlyHint / idempotentHint;
- `override`: the servers file's `effects` entry for the tool.
"""

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from agentrt.activities.policy import check_policies
from agentrt.activities.ports import Tool
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.toolbox.base import TypedTool
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.activities.toolbox.mcp_config import McpConfig, McpServer
from agentrt.contracts.profiles import Profile
from agentrt.core.policies import PolicySet
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.workers.toolboxes import load_toolboxes

Sources = dict[str, str]  # tool name -> where its effect came from (MCP tools)
NONE = "-"


@dataclass(frozen=True)
class ToolLine:
    name: str
    toolbox: str
    effect: str
    source: str
    approval: str  # "profile: yes|no" for each profile offering it; "-" when none does
    probe: str


def python_source(tool: Tool) -> str:
    if isinstance(tool, TypedTool):
        return "declared" if tool.declared_effect is not None else "default"
    return "declared"  # a tool class of its own answers `effect` itself


def mcp_source(server: McpServer, tool: str, annotated: bool) -> str:
    """The same order as the worker's effect_of (activities/toolbox/mcp.py)."""
    if tool in server.effects:
        return "override"
    if server.trust_annotations and annotated:
        return "MCP annotation"
    return "default"


def probe_text(tool: Tool) -> str:
    """A tool's reconcile probe, if it declares one (`reconcile`): its name."""
    named = tool.spec.reconcile  # the probe as the tool names it (a function, an MCP tool)
    if named:
        return named
    probe = getattr(tool, "reconcile", None)
    if probe is None:
        return NONE
    if isinstance(probe, str):
        return probe
    name = getattr(probe, "__qualname__", None) or getattr(probe, "__name__", None)
    spec = getattr(getattr(probe, "spec", None), "name", None)
    return str(spec or name or type(probe).__name__)


def tool_lines(
    boxes: Sequence[Toolbox],
    mcp: Sequence[tuple[str, list[Tool]]],
    sources: Sources,
    profiles: Mapping[str, Profile],
    settings: Settings,
    pending: Sequence[str] = (),
    policies: Mapping[str, PolicySet] | None = None,
) -> list[ToolLine]:
    """One line per loaded tool, by name. The profiles are resolved against the tools as
    the worker resolves them: a profile naming a tool nobody loads is the same ConfigError."""
    pool = ThreadPoolExecutor(1)
    engine = create_engine(settings.database.resolved_url())  # connects only if a tool reads
    try:
        made = sessionmaker(engine)
        ctx = ToolboxContext(settings=settings, executor=pool, sessions=made, read_sessions=made)
        groups: dict[str, list[Tool]] = {b.name: b.build(ctx) for b in boxes}
        groups.update(dict(mcp))
        registry = ToolRegistry(groups=groups, pending=pending)
        catalog = ProfileCatalog(profiles, registry)
        check_policies(policies or {}, catalog, registry)  # as the worker does at start
    finally:
        pool.shutdown(wait=False)
        engine.dispose()
    resolved = [p for n in catalog.names() if (p := catalog.get(n)) is not None]
    lines = []
    for name in registry.names():
        tool = registry.get(name)
        assert tool is not None
        offered = [p for p in resolved if name in p.tools]
        approval = "; ".join(
            f"{p.name}: {'yes' if p.approval_binds(tool.effect) else 'no'}" for p in offered
        )
        lines.append(
            ToolLine(
                name=name,
                toolbox=registry.owner(name) or NONE,
                effect=tool.effect.value,
                source=sources.get(name) or python_source(tool),
                approval=approval or NONE,
                probe=probe_text(tool),
            )
        )
    return lines


async def mcp_tools(
    config: McpConfig | None, settings: Settings | None = None
) -> tuple[list[tuple[str, list[Tool]]], Sources, dict[str, str]]:
    """The MCP servers' tools as the worker opens them, where each effect came from (the
    annotations), and each server that is down with why (the worker starts without its
    tools and offers them once it answers); with `settings`, the remote agents' too (a
    card not pinned, or changed, is down with both digests: what an operator pins)."""
    if config is None:
        return [], {}, {}
    boxes, sources, down = await _mcp_tools(config)
    if config.remote_agents and settings is not None:
        from agentrt.activities.toolbox.remote_agents import opened_agents

        agents = opened_agents(config.remote_agents, settings)
        try:
            await agents.open()
            declared = {a.name: a.skills for a in config.remote_agents}
            for name, tools in agents.boxes():
                for t in tools:  # an effect the file declares, else the default
                    skill = t.spec.name.partition(".")[2]
                    sources[t.spec.name] = "declared" if skill in declared[name] else "default"
            boxes, down = [*boxes, *agents.boxes()], {**down, **agents.down()}
        finally:
            await agents.close()
    return boxes, sources, down


async def _mcp_tools(
    config: McpConfig,
) -> tuple[list[tuple[str, list[Tool]]], Sources, dict[str, str]]:
    from agentrt.activities.toolbox.mcp_servers import McpServers

    servers = McpServers(config)
    try:
        await servers.open()
        sources: Sources = {}
        for state in servers.states():
            for spec in state.specs:
                annotated = spec.annotations is not None
                sources[f"{state.server.name}.{spec.name}"] = mcp_source(
                    state.server, spec.name, annotated
                )
        return servers.boxes(), sources, servers.down()
    finally:
        await servers.close()


def render(lines: Sequence[ToolLine], emit: Callable[[str], None]) -> None:
    head = ("TOOL", "TOOLBOX", "EFFECT", "FROM", "APPROVAL", "PROBE")
    rows = [head, *((t.name, t.toolbox, t.effect, t.source, t.approval, t.probe) for t in lines)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        emit("  ".join([*cells, row[-1]]).rstrip())
    if not lines:
        emit("(no tool is loaded)")


async def list_tools(
    settings: Settings, mcp: McpConfig | None, emit: Callable[[str], None]
) -> None:
    profiles = load_profiles(settings.worker.profiles_file)
    boxes = load_toolboxes(settings)
    servers, sources, down = await mcp_tools(mcp, settings)
    render(tool_lines(boxes, servers, sources, profiles, settings, list(down)), emit)
    agents = {a.name for a in mcp.remote_agents} if mcp is not None else set()
    for name, reason in sorted(down.items()):
        kind = "remote agent" if name in agents else "MCP server"
        emit(f"({kind} {name} is down: {reason}; its tools are listed once it answers)")
