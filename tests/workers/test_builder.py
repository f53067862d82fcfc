"""The sandbox's pass-through list covers the agent run's own modules."""

from pathlib import Path

import agentrt.workflows
from agentrt.workers.builder import WORKFLOW_PASSTHROUGH

# Its own workflow, rarely run: re-imported per run like any module not reviewed for sharing.
SANDBOXED = {"retention", "__init__"}


def test_every_module_of_the_agent_run_is_passed_through() -> None:
    # A helper module missing here is re-imported by the sandbox for every run (CPU per run,
    # issue 12): a new one must be reviewed against builder.py's reasons and listed.
    folder = Path(agentrt.workflows.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - SANDBOXED
    assert {"agent_run", "_steps", "fence"} <= modules
    missing = {m for m in modules if f"agentrt.workflows.{m}" not in WORKFLOW_PASSTHROUGH}
    assert not missing
