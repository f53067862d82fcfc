"""The long-run section's tool: a read whose result is 4 kB, as a search or a record
dump is. It reads the demo record the agent's `lookup_order` reads and fills the rest; the
hand-written loop's tool returns the same size when given `result_bytes`
(bench/loop_activities.py)."""

import asyncio
import json
from typing import Any

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.activities.toolbox.decorator import tool
from agentrt.contracts.enums import ToolEffect
from agentrt.store.demo import DemoWorld

RESULT_BYTES = 4096


def _tools(ctx: ToolboxContext) -> list[Tool]:
    world = DemoWorld(ctx)

    @tool(effect=ToolEffect.READ_ONLY)
    async def bulk_lookup(order_id: str) -> str:
        """Look an order up with its full history (a 4 kB result)."""
        found: Any = await asyncio.to_thread(world.lookup, f"order:{order_id}")
        text = json.dumps({"order": found, "history": ""})
        return text[:-2] + "." * max(0, RESULT_BYTES - len(text)) + '"}'

    return [bulk_lookup]


toolbox = Toolbox("bench-long", factory=_tools)
