"""A start withdrawn because no worker began it in time, and the one answer every later
send of that start gets (issue 28 item 7).

The withdrawal is the run's cancel (the same as `cancel`), whose Temporal cancel request
carries a cause of its own, `withdrawn:<code>` (`no_worker` or `busy`). Temporal keeps it
in the workflow's history, so a start sent again under the same run id reads the answer
the first send got, whether or not a worker has since begun the run and cancelled it: the
resend is never told the run is live while it is being withdrawn.

Which cause: a worker that polled the queue during the wait (Temporal's DescribeTaskQueue
lists it, with the time it last polled) and did not begin the run was busy; with none,
no worker serves the queue (a worker that stopped minutes ago is still listed, with an old
poll time)."""

from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import NoWorkerError, WorkersBusyError

WITHDRAWN = "withdrawn:"
# A worker whose last poll is older than the wait plus this did not poll during it.
POLL_SLACK = timedelta(seconds=5)
RECENT_SECONDS = 10.0  # a resend's own look at the queue: polled this lately, it is busy


def withdrawal_cause(error: NoWorkerError) -> str:
    """The Temporal cancel request's cause for a start withdrawn with `error`."""
    return f"{WITHDRAWN}{error.code}"


async def recent_pollers(client: Client, queue: str, within: float) -> int:
    """How many workers polled the queue's workflow tasks within the last `within` seconds
    (RPCError: Temporal did not say)."""
    described = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    since = datetime.now(UTC) - timedelta(seconds=within) - POLL_SLACK
    return sum(
        1
        for p in described.pollers
        if not p.HasField("last_access_time") or p.last_access_time.ToDatetime(UTC) >= since
    )


def not_begun_error(run_id: str, queue: str, polling: int | None, within: float) -> NoWorkerError:
    """Why no worker began the run within `within` seconds: none polled (or Temporal did not
    say), or they polled and were busy."""
    again = "then start the run again under a new run id"
    if polling:
        return WorkersBusyError(
            f"workers poll task queue {queue!r} but none began run {run_id} within "
            f"{within:g}s (they are busy): it was withdrawn; {again}, later"
        )
    why = (
        f"no worker is polling task queue {queue!r}"
        if polling == 0
        else f"no worker on task queue {queue!r} began it within {within:g}s"
    )
    return NoWorkerError(
        f"{why}: run {run_id} was withdrawn (start a worker with AGENTRT_TASK_QUEUE={queue}, "
        f"{again})"
    )


def resent_error(run_id: str, code: str, queue: str) -> NoWorkerError:
    """The answer to a start sent again for a run that was withdrawn with `code`."""
    cls = WorkersBusyError if code == WorkersBusyError.code else NoWorkerError
    why = (
        "the workers polling it were busy"
        if cls is WorkersBusyError
        else "no worker polled it in time"
    )
    return cls(
        f"run {run_id} was withdrawn: no worker on task queue {queue!r} began it within the "
        f"start bound ({why}); start the run again under a new run id"
    )


async def withdrawn(client: Client, run_id: str) -> NoWorkerError | None:
    """The typed error a start of `run_id` was withdrawn with, read from Temporal; None when
    it was not withdrawn (or Temporal no longer holds it)."""
    handle = client.get_workflow_handle(run_id)
    try:
        desc = await handle.describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return None
        raise
    if not desc.raw_description.workflow_extended_info.cancel_requested:
        return None  # the one cheap answer of every start that was not cancelled
    async for event in handle.fetch_history_events():
        if event.HasField("workflow_execution_cancel_requested_event_attributes"):
            cause = event.workflow_execution_cancel_requested_event_attributes.cause
            if not cause.startswith(WITHDRAWN):
                return None  # cancelled by someone, not withdrawn
            return resent_error(run_id, cause[len(WITHDRAWN) :], desc.task_queue)
    # Requested, but not in the history yet: Temporal holds back what arrives while a
    # worker holds one of the run's workflow tasks (a busy worker's). The run is being
    # cancelled before it began all the same: never live. Its cause, as the queue is now.
    try:
        polling = await recent_pollers(client, desc.task_queue, RECENT_SECONDS)
    except RPCError:
        polling = 0
    code = WorkersBusyError.code if polling else NoWorkerError.code
    return resent_error(run_id, code, desc.task_queue)
