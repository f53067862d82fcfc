"""AgentRunWorkflow: the bounded agent loop, with approval, input and cancel.

Every I/O is an activity; the transcript lives in the database and activities get
references (run uuid, round, sequence), so history grows linearly with model calls.
Handlers (`answer` and its adapters `decide`, `submit_input`, `reconcile`; `approve`,
`cancel`) interleave with the loop only at its awaits; they touch the pauses' gates and
the cancel request.
"""

import asyncio

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from agentrt.workflows import _steps as steps
from agentrt.workflows import answers, patches, pauses, riding, segments
from agentrt.workflows._calls import error_type
from agentrt.workflows._context import (
    RunContext,
    clear_status,
    set_status,
    started_running,
)
from agentrt.workflows._group import run_turn
from agentrt.workflows._loop import Stop, guardrail_stop, needs_approval
from agentrt.workflows.a2a import project
from agentrt.workflows.settle import (
    cancelled,
    complete,
    invalid_output,
    stop,
    take_cancel,
    typed_output,
)

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.a2a import InputMessage
    from agentrt.contracts.answers import Answered, PauseAnswer
    from agentrt.contracts.approval import (
        ApprovalDecision,
        CancelRequest,
        DecideResult,
        DecisionRefusal,
        PendingApproval,
        denial_note,
    )
    from agentrt.contracts.budget import BudgetState
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.ids import (
        QUERY_BUDGET,
        QUERY_PENDING_APPROVAL,
        QUERY_REFUSED_DECISIONS,
        SIGNAL_APPROVE,
        SIGNAL_CANCEL,
        UPDATE_ANSWER,
        UPDATE_BEGUN,
        UPDATE_DECIDE,
        UPDATE_RECONCILE,
        UPDATE_SUBMIT_INPUT,
        WORKFLOW_AGENT_RUN,
    )
    from agentrt.contracts.plan import RunPlan
    from agentrt.contracts.reconcile_answer import ReconcileAnswer, ReconcileOutcome
    from agentrt.contracts.run import (
        BegunResult,
        RunRequest,
        RunResult,
    )
    from agentrt.contracts.turn import TurnEnd


@workflow.defn(name=WORKFLOW_AGENT_RUN)
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._ctx = RunContext()
        self._loop_task: asyncio.Task[TerminationReason] | None = None

    # --- handlers -------------------------------------------------------------------------

    @workflow.signal(name=SIGNAL_APPROVE)
    def approve(self, raw: RawValue) -> None:
        """Fire-and-forget decision (works with the stock CLI); checked like the update."""
        pauses.decide_by_signal(self._ctx, raw)

    @workflow.update(name=UPDATE_ANSWER)
    async def answer(self, given: PauseAnswer) -> Answered:
        """Any answer a waiting run takes (a decision, a follow-up, an answer on an
        interrupted write): the one path (workflows/answers.py)."""
        taken = await answers.answer(self._ctx, given)
        return Answered(run_id=self._ctx.run_id, kind=taken.kind)

    @answer.validator
    def _validate_answer(self, given: PauseAnswer) -> None:
        answers.check(self._ctx, given)

    # The updates of earlier clients (frozen names): adapters onto the one path, each
    # expecting its own kind and answering with its own result.

    @workflow.update(name=UPDATE_DECIDE)
    async def decide(self, decision: ApprovalDecision) -> DecideResult:
        await answers.answer(self._ctx, decision)
        return DecideResult(
            run_id=self._ctx.run_id, approved=decision.approved, turn_digest=decision.turn_digest
        )

    @decide.validator
    def _validate_decision(self, decision: ApprovalDecision) -> None:
        answers.check(self._ctx, decision, self._ctx.gate)

    @workflow.update(name=UPDATE_SUBMIT_INPUT)
    async def submit_input(self, message: InputMessage) -> None:
        """A follow-up message for a run that asked for more information."""
        await answers.answer(self._ctx, message)

    @submit_input.validator
    def _validate_input(self, message: InputMessage) -> None:
        answers.check(self._ctx, message, self._ctx.input)

    @workflow.update(name=UPDATE_RECONCILE)
    async def reconcile(self, answer: ReconcileAnswer) -> ReconcileOutcome:
        """A person's answer on the interrupted write the run waits on."""
        await answers.answer(self._ctx, answer)
        then = answer.then if answer.answer == "not_applied" else None
        return ReconcileOutcome(
            run_id=self._ctx.run_id, call_id=answer.call_id, answer=answer.answer, then=then
        )

    @reconcile.validator
    def _validate_reconcile(self, answer: ReconcileAnswer) -> None:
        answers.check(self._ctx, answer, self._ctx.reconcile)

    # ABANDON: every path out of `run` lets it answer first; should one not, the starter
    # gets "workflow completed" rather than the workflow failing its task over it.
    @workflow.update(name=UPDATE_BEGUN, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON)
    async def begun(self) -> BegunResult:
        """Answers once the run row exists, or fails with why it never will (the starter's
        Update-with-Start: `start` returns only for a run that exists)."""
        ctx = self._ctx
        await workflow.wait_condition(lambda: ctx.plan is not None or ctx.begin_failure is not None)
        if ctx.plan is None:
            failure = ctx.begin_failure
            assert failure is not None
            raise ApplicationError(failure.message, type=failure.type, non_retryable=True)
        return BegunResult(
            run_id=ctx.run_id, profile=ctx.plan.profile, max_iterations=ctx.plan.max_iterations
        )

    @workflow.signal(name=SIGNAL_CANCEL)
    def cancel(self, request: CancelRequest) -> None:
        take_cancel(self._ctx, request, self._loop_task)

    @workflow.query(name=QUERY_PENDING_APPROVAL)
    def pending_approval(self) -> PendingApproval | None:
        return self._ctx.gate.pending

    @workflow.query(name=QUERY_REFUSED_DECISIONS)
    def refused_decisions(self) -> list[DecisionRefusal]:
        return list(self._ctx.refused)

    @workflow.query(name=QUERY_BUDGET)
    def budget(self) -> BudgetState:
        """Spent, reserved (a model call in flight holds its room) and the room left."""
        return self._ctx.ledger.state()

    # --- the run --------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: RunRequest) -> RunResult:
        ctx = self._ctx
        ctx.run_id = inp.run_id
        ctx.task_id = inp.a2a_task_id
        ctx.gate.initiator = inp.initiator
        # A child's depth in its tree; a start that is no child workflow is a root (0).
        ctx.depth = inp.depth if inp.carry is not None or steps.parent_of(inp) else 0
        if inp.carry is not None:  # a later segment of a long run: it has begun
            segments.resume(ctx, inp.carry)
            return await self._go(inp, None)
        ctx.patches = patches.at_start()
        status_set = started_running()
        try:
            begin = await steps.begin(ctx, inp)
        except FailureError as err:  # a local activity's failure arrives bare (_calls)
            # Nothing was written: the run never existed. `begun` tells the starter why.
            if status_set:
                clear_status()
            kind = error_type(err)
            ctx.begin_failure = ApplicationError(
                f"run could not begin: {steps.begin_reason(err)}", type=kind, non_retryable=True
            )
            await workflow.wait_condition(workflow.all_handlers_finished)
            raise ApplicationError(
                ctx.begin_failure.message, type=kind, non_retryable=True
            ) from None
        ctx.plan = begin.plan
        ctx.gate.four_eyes = begin.plan.four_eyes
        ctx.state.next_sequence = begin.next_sequence
        if not status_set:
            set_status(RunStatus.RUNNING)
        return await self._go(inp, begin.guardrail)

    async def _go(self, inp: RunRequest, guardrail: str | None) -> RunResult:
        """The run from its first round (`guardrail`: the input chain's verdict on the
        prompt) or, in a later segment (None), from the round it got to."""
        ctx = self._ctx
        try:
            if guardrail is not None:
                await project(ctx)
                blocked = guardrail_stop(guardrail)
                if blocked is not None:
                    raise blocked
                ctx.check_cancel()
            # (A later segment checks at its first step instead: a cancel that came with
            # its start is pending on this task, and must be spent at an await here, not
            # on the settle's.)
            self._loop_task = asyncio.create_task(self._loop(ctx.require_plan()))
            reason = await self._loop_task
        except segments.Continue:
            await riding.flush(ctx)  # the reads of its last round: not carried over
            segments.continue_as_new(ctx, inp)  # raises: this segment closes here
        except Stop as why:
            return await stop(ctx, why)
        except asyncio.CancelledError:
            return await cancelled(ctx)
        except ActivityError as err:
            # The net under every path out of the loop: a failure no step turned into a
            # Stop still ends in a guarded settle, never a closed workflow over a live row.
            return await stop(
                ctx, Stop(TerminationReason.INTERNAL_ERROR, error_type=error_type(err))
            )
        return await complete(ctx, reason)

    async def _loop(self, plan: RunPlan) -> TerminationReason:
        ctx, st = self._ctx, self._ctx.state
        typed_output(ctx)
        steps.start_budget(ctx)
        if ctx.carried_retries is not None:
            ctx.output_retries = ctx.carried_retries
        for round_no in range(st.iterations + 1, plan.max_iterations + 1):
            if segments.due(ctx, round_no):
                ctx.check_cancel()
                raise segments.Continue()
            ctx.details.running(plan, round_no)
            seq = st.take_sequence()
            turn, end = await steps.model(ctx, round_no, seq, offer_tools=True)
            calls = turn.tool_calls
            st.iterations = round_no
            if end is TurnEnd.INPUT:
                await pauses.await_input(ctx, round_no)
                continue
            if end is TurnEnd.ANSWER:
                return TerminationReason.ANSWERED
            if end is TurnEnd.INVALID:
                invalid_output(ctx)
                continue
            if needs_approval(calls, plan):
                decision = await pauses.await_decision(ctx, round_no, calls)
                if not decision.approved:
                    note = denial_note(decision.decided_by, decision.reason)
                    for c in calls:
                        await steps.refuse(ctx, round_no, c, note)
                    continue
            await run_turn(ctx, round_no, calls)
        # Cap hit with tool calls handled: one tool-less call synthesises the answer.
        st.truncated = True
        seq = st.take_sequence()
        _, end = await steps.model(ctx, plan.max_iterations + 1, seq, offer_tools=False)
        if end is TurnEnd.INVALID:  # no round left to retry in
            ctx.output_retries = 0
            invalid_output(ctx)
        return TerminationReason.MAX_ITERATIONS
