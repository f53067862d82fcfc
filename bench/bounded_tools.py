"""The demo tools, with the refund declaring its own attempt bound (1 s): the toolbox the
reconcile chaos bench (bench.chaos_reconcile) and the kill tests of a bounded write
(tests/fence/test_reconcile_kill.py) load in their worker processes in place of the demo
entry point, so the demo rules and profiles drive it unchanged.

A worker loads it with AGENTRT_TOOLBOX_ENTRY_POINTS=false and
AGENTRT_TOOLBOXES=bench.bounded_tools:toolbox (the repository on PYTHONPATH)."""

from pathlib import Path
from typing import Any

from agentrt.activities.toolbox.base import TypedTool
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.activities.toolbox.demo import IssueRefund, LookupOrder, SetRecord
from agentrt.store.demo import DemoWorld

ATTEMPT_SECONDS = 1.0
REPOSITORY = Path(__file__).resolve().parents[1]


class BoundedRefund(IssueRefund):
    """The demo refund: one ledger row, well within a second."""

    attempt_seconds = ATTEMPT_SECONDS


def _tools(ctx: ToolboxContext) -> list[TypedTool[Any]]:
    world = DemoWorld(ctx)
    return [LookupOrder(world), SetRecord(world), BoundedRefund(world)]


toolbox = Toolbox("demo", factory=_tools)


def worker_env() -> dict[str, str]:
    """What a worker process's environment adds to load this toolbox."""
    return {
        "AGENTRT_TOOLBOX_ENTRY_POINTS": "false",
        "AGENTRT_TOOLBOXES": "bench.bounded_tools:toolbox",
        "PYTHONPATH": str(REPOSITORY),
    }
