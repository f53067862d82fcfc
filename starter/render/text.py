"""Short texts of a run's parts, for one line of the terminal: a value cut to a width, a
tool call, a cost, a spend, a status in its colour, a call's effect class."""

import json
from typing import Any

from rich.text import Text

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.messages import ToolCall

STATUS_STYLE = {
    RunStatus.RUNNING: "cyan",
    RunStatus.WAITING_FOR_APPROVAL: "yellow",
    RunStatus.AWAITING_RECONCILIATION: "yellow",
    RunStatus.COMPLETED: "green",
    RunStatus.FAILED: "red",
    RunStatus.CANCELLED: "magenta",
}


def shorten(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def call_text(call: ToolCall | dict[str, Any]) -> str:
    """`tool(key=value, ...)`: compact enough for one line, explicit enough to approve."""
    if isinstance(call, ToolCall):
        name, args = call.name, call.arguments
    else:
        name, args = str(call.get("name", "?")), call.get("arguments") or {}
    if not isinstance(args, dict):  # a privacy filter may have replaced the arguments
        return f"{name}({shorten(args, 60)})"
    inner = ", ".join(f"{k}={shorten(v, 40)}" for k, v in args.items())
    return f"{name}({inner})"


def cost_text(cost: object) -> str:
    """A cost in USD; None is an unknown price, never shown as $0."""
    return f"${cost:.6f}" if isinstance(cost, int | float) else "cost unknown"


def spend_text(p: dict[str, object]) -> str:
    tokens = f"{p.get('prompt_tokens', 0)}+{p.get('completion_tokens', 0)} tokens"
    return f"{tokens}, {cost_text(p.get('cost_usd'))}"


def status_text(status: RunStatus) -> Text:
    return Text(status.value, style=STATUS_STYLE.get(status, "bold"))


def effect_text(effects: dict[str, str], call_id: str) -> str:
    """A pending call's effect class as the run recorded it, for a one-line listing."""
    effect = effects.get(call_id)
    return f" [{effect}]" if effect else ""
