"""Helpers for tests that drive a run through its approval pause."""

import asyncio

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import RunView
from agentrt.starter.facade import AgentRuntime


async def until_status(
    runtime: AgentRuntime, run_id: str, *wanted: RunStatus, within: float = 30.0
) -> RunView:
    """Poll the stored run until it has one of `wanted` statuses (bounded)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            view = await runtime.status(run_id)
            if view.status in wanted:
                return view
        except Exception:  # the run row may not exist for a few ms after start
            view = None
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"run {run_id} never reached {wanted}: {view}")
        await asyncio.sleep(0.05)


def pending_digest(view: RunView) -> str:
    """The turn digest a decision on the approval `view` waits on must carry."""
    assert view.pending_approval is not None
    return view.pending_approval.turn_digest


async def decide(runtime: AgentRuntime, view: RunView, *, approved: bool, by: str = "bob") -> None:
    """Approve or deny the turn `view` is waiting on, by that turn's digest."""
    assert view.pending_approval is not None
    digest = view.pending_approval.turn_digest
    reason = None if approved else "not this one"  # a denial needs one
    await runtime.approve(
        view.run_id, approved=approved, decided_by=by, turn_digest=digest, reason=reason
    )
