"""Enumerations shared by every process. Values are stored and sent: never rename one."""

from enum import StrEnum


class RunStatus(StrEnum):
    """Where a run is: running, paused for a person, or ended (`terminal`)."""

    # Temporal holds the run (an accepted start) but no worker has begun it: there is no
    # row yet, so this status is read from Temporal (api/operator/starting.py), never stored.
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    WAITING_FOR_APPROVAL = "WAITING_FOR_APPROVAL"
    WAITING_FOR_INPUT = "WAITING_FOR_INPUT"
    # A write's outcome is unknown and the profile says `on_unknown_outcome: ask`: the run
    # waits, holding no worker, for a person to say what the target system shows.
    AWAITING_RECONCILIATION = "AWAITING_RECONCILIATION"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def terminal(self) -> bool:
        """Whether the run has ended: completed, failed or cancelled."""
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class TerminationReason(StrEnum):
    """Why a run ended; the status says how."""

    ANSWERED = "answered"
    MAX_ITERATIONS = "max_iterations"
    INTERRUPTED_WRITE = "interrupted_write"
    COMPLETION_FAILED = "completion_failed"
    PROVIDER_FAILED = "provider_failed"
    INTERNAL_ERROR = "internal_error"
    CANCELLED = "cancelled"
    POLICY_DENIED = "policy_denied"
    APPROVAL_DENIED = "approval_denied"
    APPROVAL_TIMEOUT = "approval_timeout"
    SUSPEND_FAILED = "suspend_failed"
    RESULT_NOT_RETAINABLE = "result_not_retainable"
    TOOL_FAILED = "tool_failed"  # a tool activity failed (or timed out) on every attempt
    STORE_UNAVAILABLE = "store_unavailable"  # the database stayed away past the outage window
    BUDGET_EXHAUSTED = "budget_exhausted"
    # The answer did not validate against the profile's output schema, retries spent.
    INVALID_OUTPUT = "invalid_output"


class Outcome(StrEnum):
    """What a caller is told about a settled (or paused) run. May grow: keep a default arm."""

    COMPLETED = "COMPLETED"
    AWAITING_APPROVAL = "AWAITING_APPROVAL"
    AWAITING_INPUT = "AWAITING_INPUT"
    SUSPEND_FAILED = "SUSPEND_FAILED"
    GUARDRAIL_BLOCKED = "GUARDRAIL_BLOCKED"
    GUARDRAIL_APPROVAL_REQUIRED = "GUARDRAIL_APPROVAL_REQUIRED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class ToolEffect(StrEnum):
    """What a tool's call does to the world, which decides how the runtime guards it: a
    read runs freely, an idempotent write may repeat, a non-idempotent write runs at most
    once (behind the write fence)."""

    READ_ONLY = "READ_ONLY"
    IDEMPOTENT_WRITE = "IDEMPOTENT_WRITE"
    NON_IDEMPOTENT_WRITE = "NON_IDEMPOTENT_WRITE"

    @classmethod
    def resolve(cls, value: str | None) -> "ToolEffect":
        """Fail closed: anything not declared is a non-idempotent write."""
        try:
            return cls(value) if value is not None else cls.NON_IDEMPOTENT_WRITE
        except ValueError:
            return cls.NON_IDEMPOTENT_WRITE


class EventKind(StrEnum):
    """The kind of a run's event (`agent_event.kind`), one per thing that happened."""

    RUN_STARTED = "run_started"
    LLM = "llm"
    TOOL = "tool"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL = "approval"
    DECISION_REFUSED = "decision_refused"  # a decision without a valid attestation
    # An approval policy asked people (how many, or a person because it erred); its allow
    # and deny are APPROVAL events naming `policy <name>@<version>`.
    POLICY_DECISION = "policy_decision"
    RECONCILE_REQUESTED = "reconcile_requested"  # the run waits for a person's answer
    RECONCILED = "reconciled"  # a person's answer on an interrupted write, naming them
    # An answer that failed the profile's output schema: why (each check the schema's rule
    # and path; the validator's words, which quote the answer, at full and redacted only).
    OUTPUT_INVALID = "output_invalid"
    # An operator's word on the unknown write of a run that ended (store/runs/resolution.py).
    WRITE_RESOLVED = "write_resolved"
    INPUT_REQUESTED = "input_requested"
    INPUT = "input"
    INPUT_REFUSED = "input_refused"  # a follow-up without a valid attestation of its sender
    CANCEL = "cancel"
    RUN_COMPLETED = "run_completed"
    RUN_FAILED = "run_failed"


class PendingState(StrEnum):
    """State of the write fence on a run (`agent_run.pending_state`)."""

    STAMPED = "stamped"
    EXECUTING = "executing"
    OUTCOME_UNKNOWN = "outcome_unknown"
