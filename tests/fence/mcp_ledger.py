"""A real MCP server (stdio) with a non-idempotent write and its reconcile probe.

`refund` appends one JSON line per refund it performs to the ledger file, with the
idempotency key its request's `_meta` carried; `refund_status` (read-only) answers, by
that key, whether a refund is in the ledger. LEDGER_MODE picks how `refund` misbehaves:
- "ok": it refunds and answers;
- "fail_after": it refunds, then answers with an error (isError): applied, yet an error;
- "refuse": it answers with an error and refunds nothing;
- "lose_first": its first call answers with an error and refunds nothing, later ones
  refund (every call is counted in the ledger file's `.calls` companion, with its key).

    python -m tests.fence.mcp_ledger --ledger F
"""

import argparse
import json
import os
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

IDEMPOTENCY_META_KEY = "agentrt/idempotency_key"
READ = ToolAnnotations(read_only_hint=True)


def rows(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def build(ledger: Path, mode: str) -> MCPServer:
    server = MCPServer("agentrt-ledger")
    calls = ledger.with_suffix(".calls")

    @server.tool()
    def refund(order: str, cents: int, ctx: Context) -> str:
        """Refund an order (not idempotent: every call refunds)."""
        key = (ctx.request_context.meta or {}).get(IDEMPOTENCY_META_KEY)
        first = not calls.exists()
        with calls.open("a") as out:
            out.write(json.dumps({"key": key}) + "\n")
        if mode == "refuse" or (mode == "lose_first" and first):
            raise ToolError(f"order {order} cannot be refunded now")  # its text is sent
        with ledger.open("a") as out:
            out.write(json.dumps({"key": key, "order": order, "cents": cents}) + "\n")
        if mode == "fail_after":
            raise ToolError("refunded, but the reply could not be built")
        return f"refunded {cents} cents on order {order}"

    @server.tool(annotations=READ)
    def refund_status(idempotency_key: str) -> str:
        """Whether the refund with this idempotency key is in the ledger."""
        found = [r for r in rows(ledger) if r["key"] == idempotency_key]
        if not found:
            return json.dumps({"status": "not_applied"})
        row = found[0]
        return json.dumps(
            {
                "status": "applied",
                "result": f"refunded {row['cents']} cents on order {row['order']} (ledger)",
            }
        )

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ledger", type=Path, required=True)
    ns = parser.parse_args()
    build(ns.ledger, os.environ.get("LEDGER_MODE", "ok")).run("stdio")


if __name__ == "__main__":
    main()
