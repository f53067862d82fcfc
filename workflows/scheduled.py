"""ScheduledFireWorkflow: one fire of a schedule of runs (issue 44).

A Temporal Schedule starts this workflow under `<schedule>-<time>`; the agent run's
workflow id must be its run uuid, so the fire starts the run as its child under
`fire_run_id(schedule, scheduled time)`. Every attempt, replay or reset of the same fire
names the same run: the second start finds it (Temporal refuses a second workflow of that
id) and the fire attaches instead of starting another. The fire then waits for the run to
end, so the schedule's overlap policy ("skip" by default) sees a run still going.

The run outlives its fire (ABANDON): deleting a schedule or ending a fire never cancels a
run; cancelling a run is the run's own path."""

from temporalio import workflow
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    WorkflowAlreadyStartedError,
)
from temporalio.workflow import ParentClosePolicy

from agentrt.workflows._context import PROFILE_KEY, STATUS_KEY

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import RunStatus
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import (
        MEMO_INITIATOR,
        SA_SCHEDULED_START_TIME,
        WORKFLOW_AGENT_RUN,
        WORKFLOW_SCHEDULED_FIRE,
    )
    from agentrt.contracts.run import RunRequest, RunResult
    from agentrt.contracts.schedules import FireInput, FireResult, fire_run_id

SCHEDULED_AT = SearchAttributeKey.for_datetime(SA_SCHEDULED_START_TIME)


@workflow.defn(name=WORKFLOW_SCHEDULED_FIRE)
class ScheduledFireWorkflow:
    @workflow.run
    async def run(self, fire: FireInput) -> FireResult:
        at = workflow.info().typed_search_attributes.get(SCHEDULED_AT)
        if at is None:  # started by hand, not by a schedule: no fire time to name a run by
            raise ApplicationError(
                f"{WORKFLOW_SCHEDULED_FIRE} is started by a schedule only",
                type=ErrorType.INVALID_REQUEST,
                non_retryable=True,
            )
        run_id = fire_run_id(fire.schedule_id, at)
        request = RunRequest(
            run_id=run_id,
            profile=fire.profile,
            prompt=fire.prompt,
            max_iterations=fire.max_iterations,
            initiator=fire.initiator,
        )
        try:
            handle = await workflow.start_child_workflow(
                WORKFLOW_AGENT_RUN,
                request,
                id=run_id,
                task_queue=fire.task_queue,
                result_type=RunResult,
                parent_close_policy=ParentClosePolicy.ABANDON,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                # No static summary: it would be encoded in this fire's context, the one
                # payload of the run not bound to the run (tests/security/
                # test_scheduled_payloads.py).
                memo={MEMO_INITIATOR: fire.initiator},
                # STARTING: the run upserts RUNNING once it begins, as an accepted start's.
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(PROFILE_KEY, fire.profile),
                        SearchAttributePair(STATUS_KEY, RunStatus.STARTING.value),
                    ]
                ),
            )
        except WorkflowAlreadyStartedError:
            workflow.logger.info("fire of run %s attached: the run exists", run_id)
            return FireResult(run_id=run_id, attached=True)
        try:
            result = await handle
        except ChildWorkflowError as err:  # the run failed or was cancelled (or never began)
            return FireResult(run_id=run_id, status=_ended(err))
        return FireResult(run_id=run_id, status=result.status)


_ENDED: dict[str, RunStatus] = {
    ErrorType.RUN_CANCELLED.value: RunStatus.CANCELLED,
    ErrorType.RUN_FAILED.value: RunStatus.FAILED,
}


def _ended(err: ChildWorkflowError) -> RunStatus | None:
    """How a run whose workflow did not complete ended, by the type of its failure."""
    cause = err.cause
    if isinstance(cause, CancelledError):  # a cancelled run closes CANCELED
        return RunStatus.CANCELLED
    return _ENDED.get(cause.type or "") if isinstance(cause, ApplicationError) else None
