"""What a worker says at start about what it loaded (workers/loaded.py): its toolboxes with
their tools, each MCP server up with its tools or down with why (redacted), its providers
and profiles, one line each. The real worker's lines: tests/workers/test_mcp_down.py."""

from agentrt import Toolbox, tool
from agentrt.activities.registry import ToolRegistry
from agentrt.contracts.enums import ToolEffect
from agentrt.workers.loaded import loaded_lines


@tool(effect=ToolEffect.READ_ONLY)
def lookup(order: str) -> str:
    """Look an order up."""
    return order


@tool(effect=ToolEffect.READ_ONLY)
def ping() -> str:
    """Ping."""
    return "pong"


@tool(effect=ToolEffect.READ_ONLY)
def crm_find(name: str) -> str:
    """Find a customer."""
    return name


def test_one_line_each_with_the_servers_state_and_no_secret() -> None:
    registry = ToolRegistry(
        [ping],
        groups={"orders": Toolbox("orders", [lookup]).tools, "crm": [crm_find]},
        pending=["files"],
    )
    down = {"files": "ConnectError: https://user:sk-live-0123456789abcdefghij@files.example"}
    lines = loaded_lines(
        registry, {"crm": True, "files": False}, down, ["scripted", "openai"], ["b", "a"]
    )
    assert lines[0] == "loaded toolboxes: orders (lookup); ungrouped (ping)"
    assert lines[1].startswith(
        "MCP servers: crm up (1 tools: crm_find); files DOWN, retried in the background ("
    )
    assert "sk-live" not in lines[1]
    assert lines[2:] == ["model providers: openai, scripted", "profiles served: a, b"]


def test_a_worker_with_nothing_says_so() -> None:
    assert loaded_lines(ToolRegistry(), {}, {}, [], []) == [
        "loaded toolboxes: none",
        "MCP servers: none",
        "model providers: none",
        "profiles served: none",
    ]
