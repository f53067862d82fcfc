"""The failure types that cross the Temporal boundary: `ApplicationError.type` of an
activity's or a workflow's failure, read by the workflow (retry or not, how the run ends)
and by clients (contracts/errors.py raises them as typed errors)."""

from enum import StrEnum


class ErrorType(StrEnum):
    """The type of a failure that crosses the Temporal boundary (`ApplicationError.type`)."""

    UNKNOWN_PROFILE = "UnknownProfile"
    UNKNOWN_PROVIDER = "UnknownProvider"
    PROVIDER_REJECTED = "ProviderRejected"
    PROVIDER_UNAVAILABLE = "ProviderUnavailable"
    RUN_NOT_FOUND = "RunNotFound"
    RUN_NOT_RUNNING = "RunNotRunning"
    FENCE_REJECTED = "FenceRejected"
    WRITE_FAILED = "WriteFailed"
    AUDIT_FAILED = "AuditFailed"
    WITHDRAW_FAILED = "WithdrawFailed"  # a write's target could not be told to stop waiting
    PROBE_FAILED = "ProbeFailed"  # a reconcile probe raised (retried; its text stays logged)
    COMPLETION_FAILED = "CompletionFailed"
    STORE_UNAVAILABLE = "StoreUnavailable"
    RUN_FAILED = "RunFailed"
    RUN_CANCELLED = "RunCancelled"
    RESULT_NOT_RETAINABLE = "ResultNotRetainable"
    NOT_AWAITING_INPUT = "RunNotAwaitingInput"
    # Refused approval decisions (update validator, facade).
    NOT_AWAITING_APPROVAL = "RunNotAwaitingApproval"
    STALE_TURN = "StaleTurn"
    ALREADY_DECIDED = "AlreadyDecided"
    SAME_APPROVER = "SameApprover"  # one person twice where a policy asks for N people
    POLICY_DECIDER = "PolicyDecider"  # a person's decision claiming to be a policy's
    SELF_APPROVAL = "SelfApproval"  # the workflow's own failure when its run settled FAILED
    INVALID_REQUEST = "InvalidRequest"  # a signal or update payload that is not the type
    REASON_REQUIRED = "ReasonRequired"  # a denial without a reason (every path refuses it)
    # No valid attestation (store/security/attest.py) on a decision a profile requires one for.
    UNATTESTED_DECISION = "UnattestedDecision"
    # Refused answers on an interrupted write (update validator, facade, operator API).
    NOT_AWAITING_RECONCILIATION = "RunNotAwaitingReconciliation"
    STALE_RECONCILIATION = "StaleReconciliation"  # names another call or fence
    ALREADY_RECONCILED = "AlreadyReconciled"
    UNATTESTED_RECONCILIATION = "UnattestedReconciliation"
    # A follow-up message without a valid attestation of its sender (store/security/attest.py).
    UNATTESTED_INPUT = "UnattestedInput"
    PROMPT_TOO_LONG = "PromptTooLong"  # the begin activity's own check of the prompt cap
    # The begin activity's own check of AGENTRT_MAX_ITERATIONS_CEILING (a start that came
    # around the clients, or a client whose ceiling is above the worker's).
    ITERATIONS_OVER_CEILING = "IterationsOverCeiling"
    # Why the workflow stopped a run (a run's error_type; the workflow's Stop).
    ALREADY_SETTLED = "AlreadySettled"  # the completion found the run already terminal
    APPROVAL_TIMEOUT = "ApprovalTimeout"
    BUDGET_EXHAUSTED = "BudgetExhausted"
    FENCE_REFUSED = "FenceRefused"  # the stamp found another call's fence standing
    GUARDRAIL_DENIED = "GuardrailDenied"
    GUARDRAIL_APPROVAL_REQUIRED = "GuardrailApprovalRequired"
    INPUT_REFUSED = "InputRefused"  # the store refused to record the user's input
    INVALID_OUTPUT = "InvalidOutput"  # the answer failed its output schema, retries spent
    OUTCOME_UNKNOWN = "OutcomeUnknown"  # a claimed write ended without a known outcome
    RECONCILE_GIVEN_UP = "ReconcileGivenUp"  # a person gave the interrupted write up
    RECONCILE_TIMEOUT = "ReconcileTimeout"  # nobody answered within reconcile_timeout_seconds
    RESUME_REFUSED = "ResumeRefused"
    SUSPEND_REFUSED = "SuspendRefused"
    WRITE_NEVER_STARTED = "WriteNeverStarted"  # runs before the separate bounds (fence-bounds)
    # The write was scheduled MAX_UNCLAIMED_SCHEDULES times and no worker ever claimed it:
    # nothing ran (workflows/fence_bounds.py).
    WRITE_NEVER_CLAIMED = "WriteNeverClaimed"
    # The write was interrupted and found not applied (by its probe or a person) more often
    # than MAX_REEXECUTIONS allows: it never ran to the end, and nothing of it applied.
    WRITE_REEXECUTIONS_SPENT = "WriteReexecutionsSpent"
    # Four-eyes on a person's answer (workflows/pauses_gate.py ReconcileGate): the run's
    # initiator may not answer "not applied", and the approver of the write may not
    # release its re-execution.
    SELF_RECONCILIATION = "SelfReconciliation"
    APPROVER_RECONCILIATION = "ApproverReconciliation"
    # A delegation to a child agent (contracts/agents.py), refused or failed: the call's
    # result says so to the model; the parent run goes on.
    CHILD_DEPTH_EXCEEDED = "ChildDepthExceeded"  # past AGENTRT_MAX_AGENT_DEPTH
    CHILD_FAN_OUT_EXCEEDED = "ChildFanOutExceeded"  # past AGENTRT_MAX_CHILDREN_PER_RUN
    CHILD_FAILED = "ChildFailed"  # the child run ended other than COMPLETED


# Deterministic failures: retrying cannot help.
NON_RETRYABLE = [
    ErrorType.UNKNOWN_PROFILE,
    ErrorType.UNKNOWN_PROVIDER,
    ErrorType.PROVIDER_REJECTED,
    ErrorType.RUN_NOT_FOUND,
    ErrorType.RUN_NOT_RUNNING,
    ErrorType.FENCE_REJECTED,
    ErrorType.COMPLETION_FAILED,
    ErrorType.RESULT_NOT_RETAINABLE,
]
