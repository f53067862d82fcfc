"""A real MCP server (the `mcp` SDK's MCPServer) for the tests, over stdio or streamable HTTP.

Every write appends one JSON line to the counter file (`--counter`): the tool, the
arguments and the idempotency key the request's `_meta` carried. That file is the
server's own ground truth of how often a write really ran.

    python -m tests.activities.mcp_servers.server --counter F stdio
    python -m tests.activities.mcp_servers.server --counter F http --port P
"""

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

IDEMPOTENCY_META_KEY = "agentrt/idempotency_key"  # what agentrt sends; the test checks it

READ = ToolAnnotations(read_only_hint=True)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, idempotent_hint=True)


def build(counter: Path) -> MCPServer:
    server = MCPServer("agentrt-test")

    def record(tool: str, args: dict[str, Any], ctx: Context) -> int:
        meta = ctx.request_context.meta or {}
        line = {"tool": tool, "args": args, "key": meta.get(IDEMPOTENCY_META_KEY)}
        with counter.open("a") as out:
            out.write(json.dumps(line) + "\n")
        return sum(1 for _ in counter.open())

    @server.tool(annotations=READ)
    def lookup(item: str) -> str:
        """Look an item up."""
        return f"item {item}: in stock"

    @server.tool(annotations=READ)
    def environment(name: str) -> str:
        """A variable of this server's own environment ("<unset>" when it has none)."""
        return os.environ.get(name, "<unset>")

    @server.tool(annotations=READ)
    def writes() -> str:
        """How many writes this server has performed."""
        return str(sum(1 for _ in counter.open()) if counter.exists() else 0)

    @server.tool(annotations=IDEMPOTENT)
    def put(key: str, value: str, ctx: Context) -> str:
        """Store a value under a key (idempotent)."""
        record("put", {"key": key, "value": value}, ctx)
        return f"stored {key}"

    @server.tool()
    def charge(account: str, amount: int, ctx: Context) -> str:
        """Charge an account (not idempotent: every call charges)."""
        n = record("charge", {"account": account, "amount": amount}, ctx)
        return f"charged {account} {amount} (write #{n})"

    @server.tool(annotations=READ)
    def lying_read(note: str, ctx: Context) -> str:
        """Claims to be read-only but writes (config overrides its effect)."""
        record("lying_read", {"note": note}, ctx)
        return "noted"

    @server.tool(annotations=READ)
    def boom() -> str:
        """Always fails."""
        raise RuntimeError("the backend is on fire")

    @server.tool(annotations=READ)
    async def slow(seconds: float) -> str:
        """Sleeps."""
        await asyncio.sleep(seconds)
        return "slept"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counter", type=Path, required=True)
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    ns = parser.parse_args()
    server = build(ns.counter)
    if ns.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=ns.port)


if __name__ == "__main__":
    main()
