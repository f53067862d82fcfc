"""Rich rendering of runs for the CLI and the demo, by job: short texts of a run's parts
(text.py), event lines (events.py), a run, its pending approval and the inbox's tables
(runs.py), and a live spinner that follows a run until it settles (watch.py). Callers use
the names below, through `render.<name>`."""

from agentrt.starter.render.events import event_text, print_events
from agentrt.starter.render.runs import (
    print_attention,
    print_budget,
    print_inbox,
    print_outcome,
    print_pending,
    print_run,
    write_rows,
)
from agentrt.starter.render.text import (
    STATUS_STYLE,
    call_text,
    cost_text,
    effect_text,
    shorten,
    spend_text,
    status_text,
)
from agentrt.starter.render.watch import OnWaiting, watch

__all__ = [
    "STATUS_STYLE",
    "OnWaiting",
    "call_text",
    "cost_text",
    "effect_text",
    "event_text",
    "print_attention",
    "print_budget",
    "print_events",
    "print_inbox",
    "print_outcome",
    "print_pending",
    "print_run",
    "shorten",
    "spend_text",
    "status_text",
    "watch",
    "write_rows",
]
