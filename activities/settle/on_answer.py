"""The step that completes a run when a model turn is the answer, inside the model activity
(activities/model.py): the completion's transaction (activities/settle/completion.py),
retried in place, with the answer's turn kept should the completion fail."""

from collections.abc import Awaitable, Callable

from temporalio.exceptions import ApplicationError

from agentrt.activities._common import db, fault, is_store_unavailable, retried
from agentrt.activities.ports import FaultHook, no_faults
from agentrt.activities.settle.completion import Completion
from agentrt.activities.settle.terms import completion_of, retryable
from agentrt.contracts.run import (
    COMPLETION_ATTEMPTS,
    ModelRequest,
    ModelResult,
    Transition,
    TurnRecord,
)

# Between the attempts of a completion retried in place: 0.2 s, doubling.
COMPLETION_PAUSES = tuple(0.2 * 2**i for i in range(COMPLETION_ATTEMPTS - 1))


async def complete_on_answer(
    completion: Completion,
    req: ModelRequest,
    turn: ModelResult,
    unrecorded: TurnRecord | None,
    record: Callable[[TurnRecord], Awaitable[None]],
    faults: FaultHook = no_faults,
) -> Transition:
    """Complete the run on the answer `turn` of the model call `req` (in the model
    activity). A retry (the worker died after the commit) finds the run completed and
    says so; a failure other than the store's is reported in the result, and the
    workflow fails the run with it.

    `unrecorded` (the turn, when this call made it) is recorded by the completion's own
    transaction. Should that fail for another reason than the store, the turn is
    recorded alone (`record`) before the next attempt, so a run that fails its
    completion still shows the answer's turn; a store outage rolls both back, and the
    activity's retry asks the provider again, as after any outage before a turn is
    recorded."""
    request = completion_of(req, turn)
    pending = unrecorded

    async def attempt() -> Transition:
        nonlocal pending
        if pending is None:
            return await db(completion.complete, request)
        try:
            settled = await db(completion.complete, request, pending)
        except Exception as exc:
            if is_store_unavailable(exc):
                raise
            await record(pending)
            pending = None
            raise
        await fault(faults, "model.after_record")
        return settled

    try:
        return await retried(attempt, COMPLETION_PAUSES, retryable, "completing the run")
    except Exception as exc:
        if is_store_unavailable(exc):
            # Retried like any store outage: the retry finds the turn recorded if it was
            # written alone, and asks the provider again if the completion's transaction,
            # which held it, was rolled back.
            raise
        kind = exc.type if isinstance(exc, ApplicationError) else None
        return Transition(applied=False, error=kind or type(exc).__name__)
