"""A run ended straight through the settle transaction (activities/settle.py), for the
tests that need a terminal row without a workflow: one home for the SettleRequest they build."""

from typing import TypedDict, Unpack

from agentrt.activities.settle import Settle
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
from agentrt.contracts.run import SettleRequest, Transition
from agentrt.store.db.context import StoreContext


class Ending(TypedDict, total=False):
    """What a test may say about the ending; SettleRequest's defaults stand for the rest."""

    status: RunStatus
    outcome: Outcome
    iterations: int
    error_type: str | None


def settle_failed(
    ctx: StoreContext,
    run_id: str,
    *,
    sequence: int,
    reason: TerminationReason,
    **ending: Unpack[Ending],
) -> Transition:
    """Settle the run as the workflow's settle activity would: no usage, no budget."""
    request = SettleRequest(
        run_id=run_id, sequence=sequence, reason=reason, privacy="full", budget=None, **ending
    )
    return Settle(ctx).settle(request)
