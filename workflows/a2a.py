"""The A2A journal's workflow side: after each committed change of a run that serves an A2A
task, the projection shows it to the task (activities/a2a.py). Idempotent per run revision,
so a projection that runs twice, or late, writes each change once."""

from temporalio import workflow

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call
from agentrt.workflows._context import RunContext

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.a2a import ProjectRequest, ProjectResult
    from agentrt.contracts.ids import ACT_A2A_PROJECT

# The projection (activities/a2a.py), by its frozen name: that module holds SQL.
PROJECT = ActivityRef[ProjectRequest, ProjectResult](ACT_A2A_PROJECT, ProjectResult)


async def project(ctx: RunContext) -> None:
    """Show the committed state to the run's A2A task (idempotent per run revision)."""
    if ctx.task_id is None:
        return
    await call(
        PROJECT,
        ProjectRequest(
            run_id=ctx.run_id, task_id=ctx.task_id, answer_level=ctx.require_plan().answer_level
        ),
        opt.store_call(),
        summary="project to A2A task",
    )
