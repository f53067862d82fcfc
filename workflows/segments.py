"""Long runs (issue 30): past the plan's `segment_rounds` rounds, a run continues as new, so
the history of each segment stays bounded however many rounds the run makes.

The next segment keeps the workflow id (the run's uuid) and carries what the run needs
(contracts.run.Carry): its plan, its round count, its spend, the next event sequence and
what is on record of decisions, inputs and answers. Not its transcript: the activities
read that from the store by reference, as in every segment, so no content goes through
the carry's payload. The next segment begins nothing (the run row exists) and goes on at
the next round.

It continues only at a safe point: at the top of a round, after the turn before it ended
(every call of it settled, its fence cleared), with no pause open (the gate, the input and
the reconcile wait are closed between rounds), with every handler finished (else a round
later: tests/workflows/test_segment_handlers.py), and no cancel requested (a cancel taken
there settles the run CANCELLED instead).
A signal that reaches the server while the segment's last task completes fails that task
(Temporal refuses to close a run over an unhandled signal), so the task runs again with it;
a cancel that reaches the next segment with its start is taken at its first step.

A pinned run's next segment stays on the worker deployment version that started the run
(Temporal's inheritance for continue-as-new; tests/workers/test_versioning.py), so one run
never mixes two builds' loops.

Behind `CONTINUE_AS_NEW`, asked only when a segment is due, so a run that never grows past
one segment (every recorded history) records no marker; plans recorded before segments
read `segment_rounds` None and never continue.
"""

from typing import NoReturn

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agentrt.workflows._context import RunContext
from agentrt.workflows.patches import Patches

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.run import Carry, RunRequest

CONTINUE_AS_NEW = "continue-as-new"


class Continue(Exception):
    """The loop reached a safe point with its segment due (raised inside the workflow)."""


def due(ctx: RunContext, round_no: int) -> bool:
    """Whether the run continues as new before `round_no`: its segment made
    `segment_rounds` rounds, or Temporal suggests it (the history grew large)."""
    plan = ctx.require_plan()
    if plan.segment_rounds is None:
        return False
    done_here = round_no - ctx.segment_first_round
    if done_here <= 0:
        return False  # at least one round a segment: never a loop of empty segments
    suggested = workflow.info().is_continue_as_new_suggested()
    if done_here < plan.segment_rounds and not suggested:
        return False
    # A handler still at work (an update answering once its decision or input is on
    # record) would be cut off: the segment waits a round for it, never blocks on it.
    if not workflow.all_handlers_finished():
        return False
    return ctx.patches.on(CONTINUE_AS_NEW)


def carry(ctx: RunContext) -> Carry:
    st = ctx.state
    return Carry(
        plan=ctx.require_plan(),
        segment=ctx.segment + 1,
        next_sequence=st.next_sequence,
        iterations=st.iterations,
        usage=st.usage,
        output_retries=ctx.output_retries,
        decided=sorted(ctx.gate.decided),
        recorded=sorted(ctx.gate.recorded),
        inputs=sorted(ctx.input.recorded),
        answered=sorted(ctx.reconcile.answered),
        refused=list(ctx.refused),
        children=ctx.children,
        patch_markers=False,  # the next segment runs on this build: it takes its patches
    )


def continue_as_new(ctx: RunContext, inp: RunRequest) -> NoReturn:
    """Close this segment and start the next, same workflow id, same queue, same search
    attributes (the run's status and profile). The prompt stays behind: the run has it."""
    nxt = RunRequest(
        run_id=ctx.run_id,
        profile=ctx.require_plan().profile,
        prompt="",
        max_iterations=inp.max_iterations,
        initiator=inp.initiator,
        a2a_task_id=inp.a2a_task_id,
        parent_run_id=inp.parent_run_id,
        depth=inp.depth,
        carry=carry(ctx),
    )
    workflow.continue_as_new(nxt)


def resume(ctx: RunContext, c: Carry) -> None:
    """Take the carry into this segment's context: the run goes on where it was. Only from
    the run's own previous segment: Temporal sets `continued_run_id` on a continue-as-new
    alone, so a carry a client sent in a start of its own (which would skip begin's checks
    and drive a run on a plan of its choosing) is refused before anything runs."""
    if workflow.info().continued_run_id is None:
        raise ApplicationError(
            "refused: a run's carry comes only from its own previous segment",
            type=ErrorType.INVALID_REQUEST.value,
            non_retryable=True,
        )
    ctx.plan = c.plan
    ctx.segment = c.segment
    ctx.segment_first_round = c.iterations + 1
    ctx.gate.four_eyes = c.plan.four_eyes
    ctx.gate.decided = set(c.decided)
    ctx.gate.recorded = set(c.recorded)
    ctx.input.recorded = set(c.inputs)
    ctx.reconcile.answered = set(c.answered)
    ctx.refused = list(c.refused)
    ctx.patches = Patches(asked=c.patch_markers)
    st = ctx.state
    st.next_sequence, st.iterations, st.usage = c.next_sequence, c.iterations, c.usage
    ctx.carried_retries = c.output_retries
    ctx.children = c.children
