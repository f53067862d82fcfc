"""Typed errors: what this project raises to its callers. The failure types that cross the
Temporal boundary are contracts/error_types.py's, re-exported here as every caller imports
them from this module."""

from typing import ClassVar

from agentrt.contracts.error_types import NON_RETRYABLE as NON_RETRYABLE
from agentrt.contracts.error_types import ErrorType as ErrorType


class AgentRuntimeError(Exception):
    """Base of every error this project raises to its callers. `code` is its type on the
    wire: the operator API's `{"error": {"type": code}}`, which the HTTP client
    (starter/remote.py) raises as the same class again (`by_code`)."""

    code: ClassVar[str] = "runtime_error"


class ConfigError(AgentRuntimeError):
    """A configuration file or setting is invalid."""

    code = "config_error"


class RulesFileError(ConfigError):
    """A scripted provider's rules file does not parse or validate."""

    code = "rules_file_invalid"


class UnknownProfileError(AgentRuntimeError):
    """The named agent profile is not declared."""

    code = "unknown_profile"


class RunNotFoundError(AgentRuntimeError):
    """No run with that uuid exists."""

    code = "run_not_found"


class RunNotBegunError(RunNotFoundError):
    """The run's workflow exists but its run does not: it failed to begin or was withdrawn
    before it began (the message says which). `pending`: its workflow is open, not begun,
    but was not started by an agentrt client (no STARTING view: `status` of an accepted
    start answers STARTING instead)."""

    code = "run_not_begun"

    def __init__(self, message: str, *, pending: bool = False) -> None:
        super().__init__(message)
        self.pending = pending


class NoWorkerError(AgentRuntimeError):
    """No worker began the run within the start bound, so the start was withdrawn: none
    polls its task queue (`no_worker`), or, as `WorkersBusyError`, workers poll it but none
    began the run in time. The same start sent again (same run id) answers the same."""

    code = "no_worker"


class WorkersBusyError(NoWorkerError):
    """Workers poll the run's task queue but none began it within the start bound (they are
    saturated); the start was withdrawn. Try again later, under a new run id."""

    code = "busy"


class InvalidRequestError(AgentRuntimeError):
    """The request was malformed; nothing was changed."""

    code = "invalid_request"


class UnknownFieldsError(InvalidRequestError):
    """A request named fields its type does not have (a misspelling, or a field that is not
    the caller's to set); the message names each with the closest known one."""

    code = "unknown_fields"


class PromptTooLongError(InvalidRequestError):
    """A prompt or message part is longer than the configured cap; nothing was created."""

    code = "prompt_too_long"


class ReasonRequiredError(InvalidRequestError):
    """A denial came without a reason: every path refuses it (the operator API, the CLI, the
    clients, the run's own `approve` signal and `decide` update); nothing changed."""

    code = "reason_required"


class RunIdTakenError(InvalidRequestError):
    """A start named a run id that Temporal already holds; nothing was changed."""

    code = "run_id_taken"


class ScheduleExistsError(InvalidRequestError):
    """A schedule of runs was created under a name another schedule holds; nothing changed."""

    code = "schedule_exists"


class ScheduleNotFoundError(AgentRuntimeError):
    """No schedule of runs has that name (or it is not visible to the caller)."""

    code = "schedule_not_found"


class StoreUnavailableError(AgentRuntimeError):
    """The database could not be reached."""

    code = "store_unavailable"


class SchemaBehindError(StoreUnavailableError):
    """The database's schema is older than this release's (or absent): a worker never
    migrates by itself. Run `agentrt migrate` (the deployment's migrate step) first."""

    code = "schema_behind"


class TemporalUnavailableError(AgentRuntimeError):
    """The Temporal frontend could not be reached."""

    code = "temporal_unavailable"


class ApprovalError(AgentRuntimeError):
    """A decision was refused before anything executed; the run is unchanged."""

    code = "approval_refused"


class RunNotAwaitingApprovalError(ApprovalError):
    """The run is not waiting for a decision (never was, already resumed, or ended)."""

    code = "not_awaiting_approval"


class StaleTurnError(ApprovalError):
    """The decision names a turn digest that is not the pending turn's."""

    code = "stale_turn"


class AlreadyDecidedError(ApprovalError):
    """The pending turn was already decided (another approver won)."""

    code = "already_decided"


class SelfApprovalError(ApprovalError):
    """Four-eyes: the run's initiator may not approve it."""

    code = "self_approval"


class PayloadKeysRequiredError(ConfigError):
    """A profile below privacy `full` was asked to start while this client sends Temporal
    payloads unencrypted (no AGENTRT_PAYLOAD_KEYS): its prompt would sit in Temporal's
    history in the clear. Nothing was started."""

    code = "payload_keys_required"


class UnattestedDecisionError(ApprovalError):
    """The decision carries no valid attestation of its decider, and the run's profile
    counts only attested decisions (`unattested_decisions: refuse`, the default)."""

    code = "unattested_decision"


class ReconcileError(AgentRuntimeError):
    """An answer on an interrupted write was refused; the run is unchanged."""

    code = "reconcile_refused"


class RunNotAwaitingReconciliationError(ReconcileError):
    """The run is not waiting for an answer on a write (never was, answered, or ended)."""

    code = "not_awaiting_reconciliation"


class StaleReconciliationError(ReconcileError):
    """The answer names a call or fence other than the write the run waits on."""

    code = "stale_reconciliation"


class AlreadyReconciledError(ReconcileError):
    """The waiting write was already answered (another operator won)."""

    code = "already_reconciled"


class UnattestedReconciliationError(ReconcileError):
    """The answer carries no valid attestation of the principal who gave it."""

    code = "unattested_reconciliation"


class SelfReconciliationError(ReconcileError):
    """Four-eyes: the run's initiator may not answer "not applied" on their own run."""

    code = "self_reconciliation"


class ApproverReconciliationError(ReconcileError):
    """Four-eyes: the person who approved the write may not release its re-execution (a
    "not applied, retry" answer); someone else must."""

    code = "approver_reconciliation"


class ResolutionError(AgentRuntimeError):
    """A resolution of an ended run's unknown write was refused; nothing changed."""

    code = "resolution_refused"


class NothingToResolveError(ResolutionError):
    """The run has not ended, or holds no write whose outcome is unknown (never did, or it
    was resolved already)."""

    code = "nothing_to_resolve"


class StaleResolutionError(ResolutionError):
    """The resolution names a call or fence other than the run's unknown write."""

    code = "stale_resolution"


class UnattestedResolutionError(ResolutionError):
    """The resolution carries no valid attestation of the principal who made it."""

    code = "unattested_resolution"


class InputError(AgentRuntimeError):
    """A follow-up message was refused (`RuntimeClient.answer` with an InputMessage); the
    run still waits, unchanged."""

    code = "input_refused"


class RunNotAwaitingInputError(InputError):
    """The run is not waiting for input (it resumed or ended), or took a message already."""

    code = "not_awaiting_input"


class UnattestedInputError(InputError):
    """The message carries no valid attestation of its sender."""

    code = "unattested_input"


def by_code(code: str) -> type[AgentRuntimeError]:
    """The error class whose `code` is `code`; the base class for a code none has."""
    pending: list[type[AgentRuntimeError]] = [AgentRuntimeError]
    while pending:
        cls = pending.pop()
        if cls.code == code:
            return cls
        pending += cls.__subclasses__()
    return AgentRuntimeError
