"""Toolboxes that tests name in AGENTRT_TOOLBOXES (`tests.workers._toolbox_samples:...`)."""

import threading

from agentrt import Toolbox, ToolContext, ToolEffect, tool
from agentrt.activities.toolbox.box import ToolboxContext


@tool(effect=ToolEffect.READ_ONLY)
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool(effect=ToolEffect.READ_ONLY)
def which_thread(ctx: ToolContext) -> str:
    return threading.current_thread().name


# Another toolbox's tool of the same name as the demo's: a clash.
@tool(effect=ToolEffect.READ_ONLY, name="lookup_order")
def lookup_order_again(order_id: str) -> str:
    return order_id


def _from_context(ctx: ToolboxContext) -> list[object]:
    assert ctx.executor is not None and ctx.sessions is not None
    return [which_thread]


weather_box = Toolbox("weather", [weather])
threads_box = Toolbox("threads", factory=_from_context)  # type: ignore[arg-type]
clashing_box = Toolbox("orders2", [lookup_order_again])
not_a_toolbox = [weather]
