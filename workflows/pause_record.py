"""Recording a pause, for each of them (approval: workflows/pauses.py; input:
workflows/input_pause.py): what every pause's transition records, and entering a pause,
which stops the run SUSPEND_FAILED where it cannot be recorded."""

from collections.abc import Callable
from typing import TypedDict, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError

from agentrt.workflows import _options as opt
from agentrt.workflows._calls import ActivityRef, call, error_type
from agentrt.workflows._context import RunContext
from agentrt.workflows._loop import Stop

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.enums import TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.messages import Usage
    from agentrt.contracts.plan import RunPlan
    from agentrt.contracts.profiles import PrivacyLevel
    from agentrt.contracts.run import Transition

P = TypeVar("P")


class PauseFields(TypedDict):
    run_id: str
    sequence: int
    privacy: PrivacyLevel


class ProgressFields(PauseFields):
    iterations: int
    usage: Usage


def pause_fields(ctx: RunContext, plan: RunPlan) -> PauseFields:
    """What every pause's transition records (PauseRequest): the run, the sequence of the
    transition's event (taken now), the run's privacy level."""
    return {"run_id": ctx.run_id, "sequence": ctx.state.take_sequence(), "privacy": plan.privacy}


def progress_fields(ctx: RunContext, plan: RunPlan) -> ProgressFields:
    """`pause_fields`, with the run's progress so far (ProgressPauseRequest)."""
    return {**pause_fields(ctx, plan), "iterations": ctx.state.iterations, "usage": ctx.state.usage}


async def enter(
    plan: RunPlan,
    ref: ActivityRef[P, Transition],
    request: P,
    summary: str,
    close: Callable[[], None],
) -> None:
    """Record a pause (for approval or for input). One that cannot be recorded, or is
    refused (e.g. cancelled first), closes what it opened and stops the run
    SUSPEND_FAILED: never an unresumable waiting run."""
    try:
        entered = await call(
            ref,
            request,
            opt.bounded_store_call(),
            summary=summary,
            outage_seconds=plan.timeouts.store_outage_seconds,
        )
    except ActivityError as err:
        close()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=error_type(err)) from None
    if not entered.applied:
        close()
        raise Stop(TerminationReason.SUSPEND_FAILED, error_type=ErrorType.SUSPEND_REFUSED)
