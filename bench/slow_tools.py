"""The parallel section's tool: a read with a fixed latency, as a remote API's lookup has.
It waits TOOL_MS, then reads the demo record the agent's `lookup_order` reads; the
hand-written loop's tool does the same when given `sleep_ms` (bench/loop_activities.py).
`lookup_after` waits as long as its call says: the load section's parallel profile issues
calls that finish in the reverse of their order, so their events commit out of sequence
order (bench/load_profiles.yaml)."""

import asyncio
import json
from typing import Any

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.activities.toolbox.decorator import tool
from agentrt.contracts.enums import ToolEffect
from agentrt.store.demo import DemoWorld

TOOL_MS = 50
MAX_AFTER_MS = 2000


def _tools(ctx: ToolboxContext) -> list[Tool]:
    world = DemoWorld(ctx)

    @tool(effect=ToolEffect.READ_ONLY)
    async def slow_lookup(order_id: str) -> str:
        """Look an order up, in a fixed 50 ms."""
        await asyncio.sleep(TOOL_MS / 1000)
        found: Any = await asyncio.to_thread(world.lookup, f"order:{order_id}")
        return json.dumps(found) if found is not None else f"No order {order_id}."

    @tool(effect=ToolEffect.READ_ONLY)
    async def lookup_after(order_id: str, ms: int) -> str:
        """Look an order up after `ms` milliseconds (at most 2 s)."""
        await asyncio.sleep(max(0, min(ms, MAX_AFTER_MS)) / 1000)
        found: Any = await asyncio.to_thread(world.lookup, f"order:{order_id}")
        return json.dumps(found) if found is not None else f"No order {order_id}."

    return [slow_lookup, lookup_after]


toolbox = Toolbox("bench-slow", factory=_tools)
