"""The one way an answer reaches a waiting run: the `answer` update (workflows/answers.py),
for a decision, a follow-up message or an answer on an interrupted write alike. Each kind's
own module (starter/_deciding.py, starter/_inputs.py, starter/_reconciling.py) makes its
keyed update id and says how the run's refusal reads as its typed error; this sends
(`send_typed`: Temporal's refusal and a missing run raised as the kind's typed errors).

A run on a worker of an earlier build (pinned by worker versioning, or a fleet mid-upgrade)
has no `answer` update: its workflow rejects the update, leaving no trace in history, and
the answer goes again, under the same id, as the kind's own update (`decide`,
`submit_input`, `reconcile`), which every build has."""

from collections.abc import Callable, Mapping

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.answers import Answered
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.ids import (
    UPDATE_ANSWER,
    UPDATE_DECIDE,
    UPDATE_RECONCILE,
    UPDATE_SUBMIT_INPUT,
)
from agentrt.contracts.reconcile_answer import ReconcileAnswer

# Each kind's own update, for a run whose build has no `answer` update.
LEGACY_UPDATES: dict[type, str] = {
    ApprovalDecision: UPDATE_DECIDE,
    InputMessage: UPDATE_SUBMIT_INPUT,
    ReconcileAnswer: UPDATE_RECONCILE,
}
# The SDK's rejection of an update its workflow has no handler for (temporalio 1.35,
# worker/_workflow_instance.py): a RuntimeError, as an ApplicationError of that type.
_NO_HANDLER_TYPE = "RuntimeError"
_NO_HANDLER_TEXT = f"Update handler for '{UPDATE_ANSWER}' expected but not found"


def no_answer_update(err: WorkflowUpdateFailedError) -> bool:
    """Whether the run rejected the `answer` update for having no handler for it."""
    cause = err.cause
    return (
        isinstance(cause, ApplicationError)
        and cause.type == _NO_HANDLER_TYPE
        and str(cause.message).startswith(_NO_HANDLER_TEXT)
    )


async def send_update(
    client: Client,
    run_id: str,
    answer: ApprovalDecision | InputMessage | ReconcileAnswer,
    update_id: str,
) -> None:
    """Send `answer` as the run's `answer` update under `update_id` (its kind's keyed id:
    a double click is deduped server-side); returns once it is on record. Raises what
    Temporal raises (WorkflowUpdateFailedError: refused; RPCError: no such run), for the
    kind's module to type."""
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.execute_update(UPDATE_ANSWER, answer, id=update_id, result_type=Answered)
    except WorkflowUpdateFailedError as err:
        if not no_answer_update(err):
            raise
        await handle.execute_update(LEGACY_UPDATES[type(answer)], answer, id=update_id)


# The typed error of a refused answer, from the failure the run gave.
Refused = Callable[[BaseException], Exception]


def refusal(
    cause: BaseException, known: Mapping[str, type[Exception]], fallback: type[Exception], text: str
) -> Exception:
    """The run's refusal as its kind's typed error (`known` by the ApplicationError's type,
    else `fallback`), saying `text` and the type."""
    kind = cause.type if isinstance(cause, ApplicationError) else None
    return known.get(kind or "", fallback)(f"{text} ({kind or type(cause).__name__})")


async def send_typed(
    client: Client,
    run_id: str,
    answer: ApprovalDecision | InputMessage | ReconcileAnswer,
    update_id: str,
    *,
    refused: Refused,
    ended: type[Exception],
) -> None:
    """`send_update`, with a refusal raised as `refused(cause)` and a run that is gone as
    `ended`: the clients' typed errors, no Temporal text."""
    try:
        await send_update(client, run_id, answer, update_id)
    except WorkflowUpdateFailedError as err:
        raise refused(err.cause) from None
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            raise ended(f"run {run_id} has ended") from None
        raise
