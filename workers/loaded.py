"""What a worker says at start about what it loaded: its toolboxes with their tools, its MCP
servers (up with their tools, or down and retried), its providers and its profiles. One
line each, at INFO, names from the configuration only (never an argument or a secret: an
MCP server's reason for being down is redacted, as it may quote its URL's credentials)."""

import logging
from collections.abc import Mapping, Sequence

from agentrt.activities.registry import ToolRegistry
from agentrt.contracts.redaction import redact_text

logger = logging.getLogger("workers")

REASON_CHARS = 200


def loaded_lines(
    registry: ToolRegistry,
    servers: Mapping[str, bool],
    down: Mapping[str, str],
    providers: Sequence[str],
    profiles: Sequence[str],
) -> list[str]:
    """The lines `log_loaded` writes. `servers`: each MCP server and whether it is up (an
    MCP server is also a toolbox of the registry; listed with the servers, not twice)."""
    boxes = [g for g in registry.groups() if g not in servers]
    grouped = {name for g in registry.groups() for name in registry.group(g) or []}
    loose = [n for n in registry.names() if n not in grouped]
    shown = [f"{g} ({', '.join(registry.group(g) or []) or 'no tools'})" for g in boxes]
    if loose:
        shown.append(f"ungrouped ({', '.join(loose)})")
    lines = [f"loaded toolboxes: {'; '.join(shown) or 'none'}"]
    if servers:
        states = []
        for name, up in sorted(servers.items()):
            if up:
                tools = registry.group(name) or []
                states.append(f"{name} up ({len(tools)} tools: {', '.join(tools)})")
            else:
                why = redact_text(down.get(name, "down"), REASON_CHARS).replace("\n", " ")
                states.append(f"{name} DOWN, retried in the background ({why})")
        lines.append(f"MCP servers: {'; '.join(states)}")
    else:
        lines.append("MCP servers: none")
    lines.append(f"model providers: {', '.join(sorted(providers)) or 'none'}")
    lines.append(f"profiles served: {', '.join(sorted(profiles)) or 'none'}")
    return lines


def log_loaded(lines: Sequence[str]) -> None:
    """Each of `loaded_lines` at INFO, a line each: what the worker serves."""
    for line in lines:
        logger.info("%s", line)
