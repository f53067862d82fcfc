"""Why a run ended, in words an operator can act on: each termination reason (and each typed
failure code a run may carry beside it) as a sentence and what to do about it. The run
page shows `RunOut.failure`; tests/api/test_failures.py checks every code has its entry."""

from pydantic import BaseModel

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType

R = TerminationReason
E = ErrorType

# reason -> (what happened, what to do about it)
REASONS: dict[TerminationReason, tuple[str, str]] = {
    R.ANSWERED: ("The model answered.", "Nothing to do."),
    R.MAX_ITERATIONS: (
        "The run used every round it was allowed without a final answer.",
        "Read the last model turns; raise max_iterations or refine the prompt and start again.",
    ),
    R.INTERRUPTED_WRITE: (
        "A write was interrupted: it may or may not have happened in the target system.",
        "Ask the target system about the call's idempotency key before retrying anything,"
        " then record what it showed: `agentrt reconcile RUN_ID applied|not-applied --reason`"
        " (POST /runs/{id}/resolution, scope runs:resolve).",
    ),
    R.INVALID_OUTPUT: (
        "The model's answer did not match the profile's output schema, after every retry.",
        "Read the run's last output_invalid event ('Answer rejected' on the timeline): it"
        " names each schema rule the answer broke, with the validator's words at privacy"
        " full or redacted. Then loosen the schema, raise output_retries, or make the"
        " instructions ask for the shape plainly.",
    ),
    R.COMPLETION_FAILED: (
        "The run's answer could not be recorded.",
        "Check the database and the worker's logs, then start the run again.",
    ),
    R.PROVIDER_FAILED: (
        "The model provider failed on every attempt (and any fallback did too).",
        "Check the provider's status and credentials, then start the run again.",
    ),
    R.INTERNAL_ERROR: (
        "The runtime hit an internal error.",
        "Read the worker's logs for this run id, and report it if it repeats.",
    ),
    R.CANCELLED: ("The run was cancelled.", "Start it again if it is still wanted."),
    R.POLICY_DENIED: (
        "A guardrail refused the model's output.",
        "Review the guardrail's rules and the prompt; nothing was sent on.",
    ),
    R.APPROVAL_DENIED: (
        "An approval was denied, so the run stopped.",
        "Nothing ran; start a new run if the action is wanted after all.",
    ),
    R.APPROVAL_TIMEOUT: (
        "Nobody decided the pending approval in time.",
        "Decide sooner, or give the profile a longer approval timeout; start it again.",
    ),
    R.SUSPEND_FAILED: (
        "The run could not pause for approval, so it stopped instead of running unapproved.",
        "Check the database and the worker's logs, then start the run again.",
    ),
    R.RESULT_NOT_RETAINABLE: (
        "The answer may not be kept at the run's privacy level, so the run failed.",
        "Use a profile whose answer level allows keeping the answer.",
    ),
    R.TOOL_FAILED: (
        "A tool failed (or timed out) on every attempt.",
        "Check the tool's target system and the worker's logs, then start the run again.",
    ),
    R.STORE_UNAVAILABLE: (
        "The database stayed unavailable longer than the run could wait.",
        "Restore the database; then start the run again.",
    ),
    R.BUDGET_EXHAUSTED: (
        "The run spent its budget (tokens or cost) before it finished.",
        "Raise the profile's budget, or narrow the prompt, and start again.",
    ),
}

# A failure code (the run's error_type) -> what it adds to the reason's sentence.
CODES: dict[ErrorType, str] = {
    E.UNKNOWN_PROFILE: "The profile is not registered by any worker.",
    E.UNKNOWN_PROVIDER: "The profile names a model provider no worker has.",
    E.PROVIDER_REJECTED: "The provider refused the request; retrying would not help.",
    E.PROVIDER_UNAVAILABLE: "The provider could not be reached.",
    E.RUN_NOT_FOUND: "The run's record was not found.",
    E.RUN_NOT_RUNNING: "The run was no longer running when a step tried to act on it.",
    E.FENCE_REJECTED: "The write fence refused the call.",
    E.WRITE_FAILED: "The write failed.",
    E.AUDIT_FAILED: "The audit record could not be written.",
    E.PROBE_FAILED: "The reconciliation probe failed.",
    E.WITHDRAW_FAILED: "The write's target could not be told to stop waiting.",
    E.COMPLETION_FAILED: "Recording the answer failed.",
    E.STORE_UNAVAILABLE: "The database was unavailable.",
    E.RUN_FAILED: "The run failed.",
    E.RUN_CANCELLED: "The run was cancelled.",
    E.RESULT_NOT_RETAINABLE: "The answer may not be kept at this privacy level.",
    E.NOT_AWAITING_INPUT: "Input arrived when the run was not waiting for any.",
    E.NOT_AWAITING_APPROVAL: "A decision arrived when the run was not waiting for one.",
    E.STALE_TURN: "A decision named a turn that is no longer pending.",
    E.ALREADY_DECIDED: "The turn was already decided.",
    E.SAME_APPROVER: "The same person approved twice where a policy asks for several.",
    E.POLICY_DECIDER: "A person's decision claimed a policy as its decider.",
    E.SELF_APPROVAL: "The initiator tried to approve their own run (four-eyes).",
    E.INVALID_REQUEST: "A request to the run was malformed.",
    E.REASON_REQUIRED: "A denial came without a reason.",
    E.UNATTESTED_DECISION: "A decision came without a valid attestation.",
    E.PROMPT_TOO_LONG: "The prompt is over the deployment's cap.",
    E.ALREADY_SETTLED: "The run had already ended when its completion was recorded.",
    E.APPROVAL_TIMEOUT: "The approval wait timed out.",
    E.BUDGET_EXHAUSTED: "The budget is spent.",
    E.FENCE_REFUSED: "Another call's write fence was still standing.",
    E.GUARDRAIL_DENIED: "The output guardrail denied the reply.",
    E.GUARDRAIL_APPROVAL_REQUIRED: "The output guardrail required an approval.",
    E.INPUT_REFUSED: "The user's input could not be recorded.",
    E.OUTCOME_UNKNOWN: "The write's outcome is unknown.",
    E.RESUME_REFUSED: "The run could not resume after the decision.",
    E.SUSPEND_REFUSED: "The run could not be paused for approval.",
    E.WRITE_NEVER_STARTED: "The write never started.",
    E.INVALID_OUTPUT: "The answer failed its output schema and the retries were spent.",
    E.RECONCILE_GIVEN_UP: "An operator gave the interrupted write up.",
    E.RECONCILE_TIMEOUT: "Nobody answered for the interrupted write in time.",
    E.NOT_AWAITING_RECONCILIATION: "The run was not waiting for an answer on a write.",
    E.UNATTESTED_RECONCILIATION: "An answer on a write came without a valid attestation.",
    E.STALE_RECONCILIATION: "An answer named a write or fence the run no longer waits on.",
    E.ALREADY_RECONCILED: "The write was already answered for.",
    E.SELF_RECONCILIATION: "The initiator answered not applied on their own run (four-eyes).",
    E.APPROVER_RECONCILIATION: "The write's approver tried to release it again (four-eyes).",
    E.UNATTESTED_INPUT: "A follow-up message came without a valid attestation of its sender.",
    E.WRITE_NEVER_CLAIMED: "The write was scheduled again and again and no worker ever started it:"
    " nothing ran.",
    E.WRITE_REEXECUTIONS_SPENT: "The write was interrupted and found not applied each time, past"
    " its bound of re-executions: nothing of it applied.",
    E.ITERATIONS_OVER_CEILING: (
        "The run asked for more rounds than this worker's AGENTRT_MAX_ITERATIONS_CEILING allows."
    ),
    E.CHILD_DEPTH_EXCEEDED: "A delegation went deeper than AGENTRT_MAX_AGENT_DEPTH allows.",
    E.CHILD_FAN_OUT_EXCEEDED: "A run called more child agents than AGENTRT_MAX_CHILDREN_PER_RUN"
    " allows.",
    E.CHILD_FAILED: "A child agent's run ended without an answer.",
}

_CODES = {code.value: text for code, text in CODES.items()}
UNKNOWN = ("The run ended for a reason this page does not know.", "Read the run's events.")


class FailureOut(BaseModel):
    reason: str | None
    error_type: str | None = None
    summary: str
    action: str
    detail: str | None = None  # what the failure code adds, when it is a typed one


def failure(
    status: RunStatus, reason: TerminationReason | None, error_type: str | None
) -> FailureOut | None:
    """Why a failed or cancelled run ended, in words; None for any other run."""
    if status not in (RunStatus.FAILED, RunStatus.CANCELLED):
        return None
    summary, action = REASONS.get(reason, UNKNOWN) if reason is not None else UNKNOWN
    return FailureOut(
        reason=reason.value if reason is not None else None, error_type=error_type,
        summary=summary, action=action, detail=_CODES.get(error_type or ""),
    )  # fmt: skip
