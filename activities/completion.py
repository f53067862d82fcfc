"""The run's completion, shared by `run.complete` and the model activity that completes a
run on its answer: one guarded transaction (answer, totals, COMPLETED), in the store."""

from temporalio import activity

from agentrt.activities._common import db, fatal, privacy_of
from agentrt.activities.ports import RunPort, SettlePort
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.run import (
    COMPLETION_ATTEMPTS,
    CompleteRequest,
    Transition,
    TurnRecord,
)

# Between the attempts of a completion retried in place: 0.2 s, doubling, as
# workflows/_options.COMPLETION_RETRY spaces run.complete's.
COMPLETION_PAUSES = tuple(0.2 * 2**i for i in range(COMPLETION_ATTEMPTS - 1))


async def complete_run(
    runs: RunPort, settle: SettlePort, req: CompleteRequest, turn: TurnRecord | None = None
) -> Transition:
    """Complete the run; a completed run answers "not applied, COMPLETED" (idempotent).
    Raises when the write fails: a run never says COMPLETED without its answer. With
    `turn`, the answer's turn is recorded in the same transaction (SettlePort.complete)."""
    privacy = await privacy_of(runs, req)
    try:
        settled = await db(
            settle.complete,
            run_id=req.run_id,
            sequence=req.sequence,
            answer_sequence=req.answer_sequence,
            iterations=req.iterations,
            truncated=req.truncated,
            reason=req.termination_reason,
            usage=req.usage,
            privacy=privacy,
            turn=turn,
        )
    except Exception as exc:
        # Exception text may hold content: log the type only.
        activity.logger.warning("completion of run %s failed: %s", req.run_id, type(exc).__name__)
        if type(exc).__name__ == "ResultNotRetainableError":
            raise fatal(
                "the result may not be kept under the privacy policy",
                ErrorType.RESULT_NOT_RETAINABLE,
            ) from None
        raise
    return settled
