"""An MCP server (the `mcp` SDK) with one read and one write tool, over stdio:

    python -m agentrt_example_toolbox.mcp_server [--shipments FILE]

Every booked shipment is one JSON line in FILE (default ./example-shipments.jsonl), with
the idempotency key agentrt sent in the request's `_meta`.
"""

import argparse
import json
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

IDEMPOTENCY_META_KEY = "agentrt/idempotency_key"


def build(shipments: Path) -> MCPServer:
    server = MCPServer("example-warehouse")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def shipping_quote(city: str) -> str:
        """Quote the price of shipping to a city."""
        return f"shipping to {city}: 4.90 EUR, 2 days"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=False))
    def book_shipment(item: str, quantity: int, city: str, ctx: Context) -> str:
        """Book a shipment (every call books one)."""
        key = (ctx.request_context.meta or {}).get(IDEMPOTENCY_META_KEY)
        line = {"item": item, "quantity": quantity, "city": city, "key": key}
        with shipments.open("a") as out:
            out.write(json.dumps(line) + "\n")
        number = sum(1 for _ in shipments.open())
        return f"shipment booked, tracking EX-{number:04d}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m agentrt_example_toolbox.mcp_server")
    parser.add_argument("--shipments", type=Path, default=Path("example-shipments.jsonl"))
    build(parser.parse_args().shipments).run("stdio")


if __name__ == "__main__":
    main()
