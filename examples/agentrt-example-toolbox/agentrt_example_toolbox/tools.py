"""Two Python tools in one toolbox: a read and a write that must not run twice."""

import os
import sqlite3
from contextlib import closing
from typing import Annotated, Any

from pydantic import Field

from agentrt import Toolbox, ToolContext, ToolEffect, tool

STOCK = {"widget": 12, "gadget": 0}


@tool(effect=ToolEffect.READ_ONLY)
def lookup_stock(item: str) -> str:
    """How many of an item the warehouse has."""
    if item not in STOCK:
        return f"No item named {item!r}."
    return f"{item}: {STOCK[item]} in stock"


@tool  # no effect declared: a NON_IDEMPOTENT_WRITE, fenced and approval-bound
def place_order(
    item: str, quantity: Annotated[int, Field(gt=0)], ctx: ToolContext
) -> dict[str, Any]:
    """Place an order for an item (every call places one)."""
    # The call's idempotency key makes a retried call find its order instead of a second one.
    db = sqlite3.connect(os.environ.get("EXAMPLE_ORDERS_DB", "example-orders.sqlite3"))
    with closing(db), db:  # one transaction, then closed
        db.execute(
            "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, key TEXT UNIQUE,"
            " run_id TEXT, item TEXT, quantity INTEGER)"
        )
        db.execute(
            "INSERT OR IGNORE INTO orders (key, run_id, item, quantity) VALUES (?, ?, ?, ?)",
            (ctx.idempotency_key, ctx.run_id, item, quantity),
        )
        (order_id,) = db.execute(
            "SELECT id FROM orders WHERE key = ?", (ctx.idempotency_key,)
        ).fetchone()
    return {"order_id": order_id, "item": item, "quantity": quantity}


toolbox = Toolbox("example", [lookup_stock, place_order])
