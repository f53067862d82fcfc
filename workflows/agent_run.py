"""AgentRunWorkflow: the bounded agent loop, with approval, input and cancel.

Every I/O is an activity; the transcript lives in the database and activities get
references (run uuid, round, sequence), so history grows linearly with model calls.
Handlers (approve, decide, submit_input, cancel) interleave with the loop only at its
awaits; they touch the approval gate, the pending input and the cancel request.
"""

import asyncio

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, ApplicationError

from agentrt.workflows import _options as opt
from agentrt.workflows._budget import budget_stop
from agentrt.workflows._calls import call, error_type, store_step
from agentrt.workflows._context import (
    RunContext,
    clear_status,
    set_status,
    started_running,
    store_patches,
)
from agentrt.workflows._fenced_write import fenced_write
from agentrt.workflows._loop import (
    Route,
    Stop,
    guardrail_stop,
    may_pause_for_input,
    needs_approval,
    route,
)
from agentrt.workflows._pauses import await_decision, await_input, project
from agentrt.workflows._settle import cancelled, complete, stop

with workflow.unsafe.imports_passed_through():
    from agentrt.activities.model import ModelActivities
    from agentrt.activities.run import RunActivities
    from agentrt.activities.tools import ToolActivities
    from agentrt.contracts.a2a import InputMessage
    from agentrt.contracts.approval import (
        ApprovalDecision,
        CancelRequest,
        DecisionReceipt,
        DecisionRefusal,
        PendingApproval,
        denial_note,
    )
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.ids import (
        QUERY_PENDING_APPROVAL,
        QUERY_REFUSED_DECISIONS,
        SIGNAL_APPROVE,
        SIGNAL_CANCEL,
        UPDATE_BEGUN,
        UPDATE_DECIDE,
        UPDATE_SUBMIT_INPUT,
        WORKFLOW_AGENT_RUN,
        idempotency_key,
    )
    from agentrt.contracts.messages import ToolCall
    from agentrt.contracts.profiles import RunPlan
    from agentrt.contracts.run import (
        AnswerTerms,
        BeginReceipt,
        BeginRequest,
        BeginResult,
        ModelRequest,
        ModelTurn,
        RefuseRequest,
        RunInput,
        RunResult,
        ToolCallRequest,
    )


MAX_REFUSALS_KEPT = 20


@workflow.defn(name=WORKFLOW_AGENT_RUN)
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._ctx = RunContext()
        self._loop_task: asyncio.Task[tuple[int, TerminationReason]] | None = None
        self._refused: list[DecisionRefusal] = []

    # --- handlers -------------------------------------------------------------------------

    @workflow.signal(name=SIGNAL_APPROVE)
    def approve(self, raw: RawValue) -> None:
        """Fire-and-forget decision (works with the stock CLI); checked like the update. A
        refusal is kept for the sender to read (query `refused_decisions`). The payload is
        decoded here: the SDK would drop a bad one with a logged traceback."""
        try:
            decision = workflow.payload_converter().from_payload(raw.payload, ApprovalDecision)
        except Exception as exc:
            decision, why = None, type(exc).__name__
        else:
            why = type(decision).__name__  # a JSON null decodes to None, unvalidated
        if not isinstance(decision, ApprovalDecision):
            workflow.logger.warning(
                "decision refused: the signal's payload is not a decision (%s)", why
            )
            return
        refused = self._ctx.gate.take(decision, run_id=self._ctx.run_id, at=workflow.now())
        if refused is None:
            return
        self._refused = [*self._refused, refused][-MAX_REFUSALS_KEPT:]
        workflow.logger.warning("decision by signal refused: %s", refused.refusal)

    @workflow.update(name=UPDATE_DECIDE)
    async def decide(self, decision: ApprovalDecision) -> DecisionReceipt:
        ctx = self._ctx
        if not ctx.gate.accept(decision):
            # Two updates delivered in one activation both pass their validators before
            # either handler runs; the second is refused here.
            refusal = ctx.gate.check(decision) or ErrorType.ALREADY_DECIDED.value
            raise ApplicationError(f"decision refused: {refusal}", type=refusal)
        # Answer once the decision is persisted (or the run ended another way).
        await workflow.wait_condition(lambda: decision.turn_digest in ctx.recorded or ctx.finished)
        if decision.turn_digest not in ctx.recorded:
            # The run ended (cancelled, failed to suspend) before the decision took effect.
            raise ApplicationError(
                "the run ended before the decision was recorded",
                type=ErrorType.NOT_AWAITING_APPROVAL.value,
            )
        return DecisionReceipt(
            run_id=ctx.run_id, approved=decision.approved, turn_digest=decision.turn_digest
        )

    @decide.validator
    def _validate_decision(self, decision: ApprovalDecision) -> None:
        if not isinstance(decision, ApprovalDecision):  # a JSON null arrives as None
            raise ApplicationError(
                "decision refused: the payload is not a decision",
                type=ErrorType.INVALID_REQUEST.value,
            )
        refusal = self._ctx.gate.check(decision)
        if refusal is not None:
            raise ApplicationError(f"decision refused: {refusal}", type=refusal)

    @workflow.update(name=UPDATE_SUBMIT_INPUT)
    async def submit_input(self, message: InputMessage) -> None:
        """A follow-up message for a run that asked for more information."""
        ctx = self._ctx
        if not ctx.input.take(message):
            raise ApplicationError(
                "run is not waiting for input", type=ErrorType.NOT_AWAITING_INPUT.value
            )
        await workflow.wait_condition(lambda: not ctx.input.waiting or ctx.finished)
        if message.message_id not in ctx.input.recorded:
            raise ApplicationError(
                "the run ended before the input was recorded",
                type=ErrorType.NOT_AWAITING_INPUT.value,
            )

    @submit_input.validator
    def _validate_input(self, message: InputMessage) -> None:
        ctx = self._ctx
        if not isinstance(message, InputMessage):  # a JSON null arrives as None
            raise ApplicationError(
                "input refused: the payload is not a message", type=ErrorType.INVALID_REQUEST.value
            )
        if not ctx.input.accepts() or ctx.finished:
            raise ApplicationError(
                "run is not waiting for input", type=ErrorType.NOT_AWAITING_INPUT.value
            )

    # ABANDON: every path out of `run` lets it answer first; should one not, the starter
    # gets "workflow completed" rather than the workflow failing its task over it.
    @workflow.update(name=UPDATE_BEGUN, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON)
    async def begun(self) -> BeginReceipt:
        """Answers once the run row exists, or fails with why it never will (the starter's
        Update-with-Start: `start` returns only for a run that exists)."""
        ctx = self._ctx
        await workflow.wait_condition(lambda: ctx.plan is not None or ctx.begin_failure is not None)
        if ctx.plan is None:
            failure = ctx.begin_failure
            assert failure is not None
            raise ApplicationError(failure.message, type=failure.type, non_retryable=True)
        return BeginReceipt(
            run_id=ctx.run_id, profile=ctx.plan.profile, max_iterations=ctx.plan.max_iterations
        )

    @workflow.signal(name=SIGNAL_CANCEL)
    def cancel(self, request: CancelRequest) -> None:
        if not isinstance(request, CancelRequest):  # a JSON null arrives as None
            workflow.logger.warning("cancel refused: the signal's payload is not a request")
            return
        if self._ctx.cancel is not None or self._ctx.finished:
            return
        self._ctx.cancel = request
        if self._loop_task is not None and not self._loop_task.done():
            self._loop_task.cancel()

    @workflow.query(name=QUERY_PENDING_APPROVAL)
    def pending_approval(self) -> PendingApproval | None:
        return self._ctx.gate.pending

    @workflow.query(name=QUERY_REFUSED_DECISIONS)
    def refused_decisions(self) -> list[DecisionRefusal]:
        return list(self._refused)

    # --- the run --------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: RunInput) -> RunResult:
        ctx = self._ctx
        ctx.run_id = inp.run_id
        ctx.task_id = inp.a2a_task_id
        ctx.gate.initiator = inp.initiator
        ctx.local_steps, ctx.answer_completes = store_patches()
        status_set = started_running()
        try:
            begin = await self._begin(inp)
        except ActivityError as err:
            # Nothing was written: the run never existed. `begun` tells the starter why.
            if status_set:
                clear_status()
            kind = error_type(err)
            ctx.begin_failure = ApplicationError(
                f"run could not begin: {_begin_reason(err)}", type=kind, non_retryable=True
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
        try:
            await project(ctx)
            blocked = guardrail_stop(begin.guardrail)
            if blocked is not None:
                raise blocked
            ctx.check_cancel()
            self._loop_task = asyncio.create_task(self._loop(begin.plan))
            answer_seq, reason = await self._loop_task
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
        return await complete(ctx, answer_seq, reason)

    async def _begin(self, inp: RunInput) -> BeginResult:
        """Insert the run row. A cancel that arrives meanwhile waits for it: cut short, the
        activity could still commit a row that nobody settles. The run then takes the
        cancel at its first check and settles CANCELLED like any other."""
        request = BeginRequest(
            run_id=inp.run_id,
            profile=inp.profile,
            prompt=inp.prompt,
            initiator=inp.initiator,
            max_iterations=inp.max_iterations,
            workflow_run_id=workflow.info().run_id,
        )
        work = asyncio.ensure_future(
            store_step(
                self._ctx.local_steps,
                RunActivities.begin,
                request,
                opt.store_call(),
                opt.local_store_call(),
                summary=f"begin {inp.profile}",
            )
        )
        while not work.done():
            try:
                await asyncio.shield(work)
            except asyncio.CancelledError:
                if work.cancelled():
                    raise
        return work.result()

    async def _loop(self, plan: RunPlan) -> tuple[int, TerminationReason]:
        ctx, st = self._ctx, self._ctx.state
        for round_no in range(1, plan.max_iterations + 1):
            ctx.details.running(plan, round_no)
            seq = st.take_sequence()
            turn = await self._model(round_no, seq, offer_tools=True)
            calls = turn.tool_calls
            st.iterations = round_no
            if not calls:
                if turn.input_required and may_pause_for_input(ctx.task_id, round_no, plan):
                    await await_input(ctx, round_no)
                    continue
                return seq, TerminationReason.ANSWERED
            if needs_approval(calls, plan):
                decision = await await_decision(ctx, round_no, calls)
                if not decision.approved:
                    note = denial_note(decision.decided_by, decision.reason)
                    for c in calls:
                        await self._refuse(round_no, c, note)
                    continue
            for c in calls:
                await self._tool(round_no, c)
        # Cap hit with tool calls handled: one tool-less call synthesises the answer.
        st.truncated = True
        seq = st.take_sequence()
        await self._model(plan.max_iterations + 1, seq, offer_tools=False)
        return seq, TerminationReason.MAX_ITERATIONS

    async def _model(self, round_no: int, seq: int, *, offer_tools: bool) -> ModelTurn:
        ctx = self._ctx
        plan = ctx.require_plan()
        ctx.check_cancel()
        answer = None
        if ctx.answer_completes:
            # Should this turn be the answer, the activity completes the run on these
            # terms: the completion's sequence is the next one (taken by `complete`).
            answer = AnswerTerms(
                sequence=ctx.state.next_sequence,
                usage=ctx.state.usage,
                pause_for_input=offer_tools and may_pause_for_input(ctx.task_id, round_no, plan),
            )
            ctx.answer_reason = (
                TerminationReason.ANSWERED if offer_tools else TerminationReason.MAX_ITERATIONS
            )
        turn = await call(
            ModelActivities.complete,
            ModelRequest(
                run_id=ctx.run_id,
                round=round_no,
                sequence=seq,
                offer_tools=offer_tools,
                answer=answer,
            ),
            opt.on_queue(opt.model_call(plan.timeouts), plan.model_task_queue),
            summary=f"model {plan.model} round {round_no}",
            fails_as=TerminationReason.PROVIDER_FAILED,
            outage_seconds=plan.timeouts.store_outage_seconds,
        )
        ctx.state.usage = ctx.state.usage + turn.usage
        if turn.settled is not None:
            # The activity found the turn to be the answer (by the checks below) and made
            # the completion: committed, so the run ends with it.
            ctx.settled = turn.settled
            return turn
        blocked = guardrail_stop(turn.guardrail) or budget_stop(ctx.state.usage, plan.budget)
        if blocked is not None:
            raise blocked
        return turn

    async def _tool(self, round_no: int, c: ToolCall) -> None:
        ctx = self._ctx
        plan = ctx.require_plan()
        ctx.check_cancel()
        kind, effect = route(c, plan)
        if kind is Route.REFUSE:
            await self._refuse(round_no, c, f"Tool {c.name!r} is not available to this agent.")
            return
        request = ToolCallRequest(
            run_id=ctx.run_id,
            round=round_no,
            sequence=ctx.state.take_sequence(),
            call=c,
            effect=effect,
            idempotency_key=idempotency_key(ctx.run_id, c.call_id),
            privacy=plan.privacy,
        )
        tool_plan = plan.tool(c.name)
        queue = tool_plan.task_queue if tool_plan is not None else None
        if kind is Route.EXECUTE:
            await call(
                ToolActivities.execute,
                request,
                opt.on_queue(opt.tool_call(plan.timeouts), queue),
                summary=f"tool {c.name}",
                fails_as=TerminationReason.TOOL_FAILED,
                outage_seconds=plan.timeouts.store_outage_seconds,
            )
        else:
            await fenced_write(request, plan.timeouts, ctx.check_cancel, task_queue=queue)

    async def _refuse(self, round_no: int, c: ToolCall, reason: str) -> None:
        ctx = self._ctx
        await call(
            ToolActivities.refuse,
            RefuseRequest(
                run_id=ctx.run_id,
                round=round_no,
                sequence=ctx.state.take_sequence(),
                call=c,
                reason=reason,
                privacy=ctx.privacy,
            ),
            opt.store_call(),
            summary=f"refuse {c.name}",
        )


# Begin failures whose message is configuration, never content: shown to the starter.
_SAFE_BEGIN_MESSAGES = frozenset({ErrorType.UNKNOWN_PROFILE.value})


def _begin_reason(err: ActivityError) -> str:
    cause = err.cause
    kind = error_type(err)
    if isinstance(cause, ApplicationError) and kind in _SAFE_BEGIN_MESSAGES:
        return cause.message
    return kind
