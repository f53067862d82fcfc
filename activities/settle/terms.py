"""The completion an answer makes, on the workflow's terms, and which of its failures the
model activity retries in place (activities/settle/completion.py)."""

from temporalio.exceptions import ApplicationError

from agentrt.activities._common import is_store_unavailable
from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.run import CompleteRequest, ModelRequest, ModelResult


def completion_of(req: ModelRequest, turn: ModelResult) -> CompleteRequest:
    """The completion that the answer `turn` of the model call `req` makes, on the terms
    the workflow sent with the call."""
    terms = req.answer
    return CompleteRequest(
        run_id=req.run_id,
        privacy=req.privacy,
        sequence=terms.sequence,
        answer_sequence=req.sequence,
        # A tool-less call past the iteration cap synthesises the answer: truncated.
        iterations=req.round if req.offer_tools else req.round - 1,
        truncated=not req.offer_tools,
        termination_reason=(
            TerminationReason.ANSWERED if req.offer_tools else TerminationReason.MAX_ITERATIONS
        ),
        usage=terms.usage + turn.usage,
        typed=terms.output_schema is not None,
    )


def retryable(exc: Exception) -> bool:
    """Retried in place: anything but a final error or a store outage (the activity's own
    retry takes that)."""
    final = isinstance(exc, ApplicationError) and exc.non_retryable
    return not final and not is_store_unavailable(exc)
