"""AgentRunWorkflow: the bounded agent loop, with approval and cancel.

Every I/O is an activity; the transcript lives in the database and activities get
references (run uuid, round, sequence), so history grows linearly with model calls.
Handlers (approve, decide, cancel) interleave with the loop only at its awaits; they touch
the approval gate and the cancel request, nothing else.
"""

import asyncio
from datetime import timedelta
from typing import NoReturn

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

from workflows import _options as opt
from workflows._approval import ApprovalGate
from workflows._calls import call, error_type
from workflows._fenced_write import fenced_write
from workflows._loop import (
    LoopState,
    Route,
    Stop,
    guardrail_stop,
    needs_approval,
    route,
    turn_digest,
)

with workflow.unsafe.imports_passed_through():
    from activities.a2a import A2AActivities
    from activities.approval import ApprovalActivities
    from activities.model import ModelActivities
    from activities.run import RunActivities
    from activities.tools import ToolActivities
    from contracts.a2a import InputMessage, ProjectRequest
    from contracts.approval import ApprovalDecision, CancelRequest, DecisionReceipt, PendingApproval
    from contracts.enums import Outcome, RunStatus, TerminationReason
    from contracts.errors import ErrorType
    from contracts.ids import (
        QUERY_PENDING_APPROVAL,
        SA_RUN_STATUS,
        SIGNAL_APPROVE,
        SIGNAL_CANCEL,
        UPDATE_DECIDE,
        UPDATE_SUBMIT_INPUT,
        WORKFLOW_AGENT_RUN,
        idempotency_key,
    )
    from contracts.messages import ToolCall
    from contracts.profiles import RunPlan
    from contracts.run import (
        AddInputRequest,
        AwaitInputRequest,
        BeginRequest,
        CompleteRequest,
        FailRequest,
        ModelRequest,
        ModelTurn,
        RefuseRequest,
        ResumeRequest,
        RunInput,
        RunResult,
        SuspendRequest,
        ToolCallRequest,
    )

STATUS_KEY = SearchAttributeKey.for_keyword(SA_RUN_STATUS)


@workflow.defn(name=WORKFLOW_AGENT_RUN)
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._state = LoopState()
        self._run_id = ""
        self._plan: RunPlan | None = None
        self._gate = ApprovalGate()
        self._recorded: set[str] = set()  # digests whose decision is persisted
        self._cancel: CancelRequest | None = None
        self._loop_task: asyncio.Task[tuple[int, TerminationReason]] | None = None
        self._finished = False
        self._task_id: str | None = None  # the A2A task this run serves, if any
        self._awaiting_input = False
        self._input: InputMessage | None = None

    # --- handlers -------------------------------------------------------------------------

    @workflow.signal(name=SIGNAL_APPROVE)
    def approve(self, decision: ApprovalDecision) -> None:
        """Fire-and-forget decision (works with the stock CLI); checked like the update."""
        if not self._gate.accept(decision):
            workflow.logger.warning("decision refused: %s", self._gate.check(decision))

    @workflow.update(name=UPDATE_DECIDE)
    async def decide(self, decision: ApprovalDecision) -> DecisionReceipt:
        self._gate.accept(decision)
        # Answer once the decision is persisted (or the run ended another way).
        await workflow.wait_condition(
            lambda: decision.turn_digest in self._recorded or self._finished
        )
        return DecisionReceipt(
            run_id=self._run_id, approved=decision.approved, turn_digest=decision.turn_digest
        )

    @decide.validator
    def _validate_decision(self, decision: ApprovalDecision) -> None:
        refusal = self._gate.check(decision)
        if refusal is not None:
            raise ApplicationError(f"decision refused: {refusal}", type=refusal)

    @workflow.signal(name=SIGNAL_CANCEL)
    def cancel(self, request: CancelRequest) -> None:
        if self._cancel is not None or self._finished:
            return
        self._cancel = request
        if self._loop_task is not None and not self._loop_task.done():
            self._loop_task.cancel()

    @workflow.update(name=UPDATE_SUBMIT_INPUT)
    async def submit_input(self, message: InputMessage) -> None:
        """A follow-up message for a run that asked for more information."""
        self._input = message
        await workflow.wait_condition(lambda: not self._awaiting_input or self._finished)

    @submit_input.validator
    def _validate_input(self, message: InputMessage) -> None:
        if not self._awaiting_input or self._input is not None or self._finished:
            raise ApplicationError(
                "run is not waiting for input", type=ErrorType.NOT_AWAITING_INPUT.value
            )

    @workflow.query(name=QUERY_PENDING_APPROVAL)
    def pending_approval(self) -> PendingApproval | None:
        return self._gate.pending

    # --- the run --------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: RunInput) -> RunResult:
        self._run_id = inp.run_id
        self._task_id = inp.a2a_task_id
        self._gate.initiator = inp.initiator
        try:
            begin = await call(
                RunActivities.begin,
                BeginRequest(
                    run_id=inp.run_id,
                    profile=inp.profile,
                    prompt=inp.prompt,
                    initiator=inp.initiator,
                    max_iterations=inp.max_iterations,
                    workflow_run_id=workflow.info().run_id,
                ),
                opt.store_call(),
                summary=f"begin {inp.profile}",
            )
        except ActivityError as err:
            # Nothing was written: the run never existed.
            raise ApplicationError(
                f"run could not begin: {error_type(err)}", type=error_type(err), non_retryable=True
            ) from None
        self._plan = begin.plan
        self._gate.four_eyes = begin.plan.four_eyes
        self._state.next_sequence = begin.next_sequence
        self._set_status(RunStatus.RUNNING)
        try:
            await self._project()
            blocked = guardrail_stop(begin.guardrail)
            if blocked is not None:
                raise blocked
            self._check_cancel()
            self._loop_task = asyncio.create_task(self._loop(begin.plan))
            answer_seq, reason = await self._loop_task
        except Stop as stop:
            return await self._stop(stop)
        except asyncio.CancelledError:
            return await self._cancelled()
        return await self._complete(answer_seq, reason)

    async def _loop(self, plan: RunPlan) -> tuple[int, TerminationReason]:
        st = self._state
        for round_no in range(1, plan.max_iterations + 1):
            seq = st.take_sequence()
            turn = await self._model(round_no, seq, offer_tools=True)
            calls = turn.tool_calls
            st.iterations = round_no
            if not calls:
                if turn.input_required and self._task_id and round_no < plan.max_iterations:
                    await self._await_input(round_no)
                    continue
                return seq, TerminationReason.ANSWERED
            if needs_approval(calls, plan):
                decision = await self._await_decision(round_no, calls)
                if not decision.approved:
                    for c in calls:
                        note = f"Denied by {decision.decided_by}" + (
                            f": {decision.reason}" if decision.reason else "."
                        )
                        await self._refuse(round_no, c, note)
                    continue
            for c in calls:
                await self._tool(round_no, c)
        # Cap hit with tool calls handled: one tool-less call synthesises the answer.
        st.truncated = True
        seq = st.take_sequence()
        await self._model(plan.max_iterations + 1, seq, offer_tools=False)
        return seq, TerminationReason.MAX_ITERATIONS

    def _check_cancel(self) -> None:
        """Boundaries re-check: an in-flight write may have absorbed the cancel request."""
        if self._cancel is not None or workflow.cancellation_reason() is not None:
            raise asyncio.CancelledError()

    async def _model(self, round_no: int, seq: int, *, offer_tools: bool) -> ModelTurn:
        assert self._plan is not None
        self._check_cancel()
        try:
            turn = await call(
                ModelActivities.complete,
                ModelRequest(
                    run_id=self._run_id, round=round_no, sequence=seq, offer_tools=offer_tools
                ),
                opt.model_call(self._plan.timeouts),
                summary=f"model {self._plan.model} round {round_no}",
            )
        except ActivityError as err:
            raise Stop(TerminationReason.PROVIDER_FAILED, error_type=error_type(err)) from None
        self._state.usage = self._state.usage + turn.usage
        blocked = guardrail_stop(turn.guardrail)
        if blocked is not None:
            raise blocked
        return turn

    async def _tool(self, round_no: int, c: ToolCall) -> None:
        assert self._plan is not None
        self._check_cancel()
        kind, effect = route(c, self._plan)
        if kind is Route.REFUSE:
            await self._refuse(round_no, c, f"Tool {c.name!r} is not available to this agent.")
            return
        request = ToolCallRequest(
            run_id=self._run_id,
            round=round_no,
            sequence=self._state.take_sequence(),
            call=c,
            effect=effect,
            idempotency_key=idempotency_key(self._run_id, c.call_id),
        )
        if kind is Route.EXECUTE:
            await call(
                ToolActivities.execute,
                request,
                opt.tool_call(self._plan.timeouts),
                summary=f"tool {c.name}",
            )
        else:
            await fenced_write(request, self._plan.timeouts, self._check_cancel)

    async def _refuse(self, round_no: int, c: ToolCall, reason: str) -> None:
        await call(
            ToolActivities.refuse,
            RefuseRequest(
                run_id=self._run_id,
                round=round_no,
                sequence=self._state.take_sequence(),
                call=c,
                reason=reason,
            ),
            opt.store_call(),
            summary=f"refuse {c.name}",
        )

    async def _await_decision(self, round_no: int, calls: list[ToolCall]) -> ApprovalDecision:
        """Suspend before any call of the turn runs; waiting holds no worker slot."""
        assert self._plan is not None
        pending = PendingApproval(
            turn_digest=turn_digest(calls), round=round_no, calls=calls, requested_at=workflow.now()
        )
        try:
            suspended = await call(
                ApprovalActivities.suspend,
                SuspendRequest(
                    run_id=self._run_id, sequence=self._state.take_sequence(), pending=pending
                ),
                opt.bounded_store_call(),
                summary="suspend for approval",
            )
        except ActivityError as err:
            raise Stop(TerminationReason.SUSPEND_FAILED, error_type=error_type(err)) from None
        if not suspended.applied:
            # Refused (e.g. cancelled first): never an unresumable waiting run.
            raise Stop(TerminationReason.SUSPEND_FAILED, error_type="SuspendRefused")
        self._gate.open(pending)
        self._set_status(RunStatus.WAITING_FOR_APPROVAL)
        await self._project()
        limit = self._plan.approval_timeout_seconds
        try:
            await workflow.wait_condition(
                lambda: self._gate.decision is not None,
                timeout=timedelta(seconds=limit) if limit else None,
                timeout_summary="approval timeout",
            )
        except TimeoutError:
            self._gate.closed = True
            raise Stop(TerminationReason.APPROVAL_TIMEOUT, error_type="ApprovalTimeout") from None
        decision = self._gate.decision
        assert decision is not None
        try:
            resumed = await call(
                ApprovalActivities.resume,
                ResumeRequest(
                    run_id=self._run_id,
                    sequence=self._state.take_sequence(),
                    round=round_no,
                    decision=decision,
                ),
                opt.store_call(),
                summary="record decision",
            )
        except ActivityError as err:
            # Fail closed: a decision that is not on record releases no write.
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type=error_type(err)) from None
        if not resumed.applied:
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type="ResumeRefused")
        self._recorded.add(decision.turn_digest)
        self._gate.close_turn()
        self._set_status(RunStatus.RUNNING)
        await self._project()
        return decision

    async def _await_input(self, round_no: int) -> None:
        """The model asked the remote user for more: wait (free) for the follow-up."""
        waiting = await call(
            ApprovalActivities.await_input,
            AwaitInputRequest(
                run_id=self._run_id, sequence=self._state.take_sequence(), round=round_no
            ),
            opt.bounded_store_call(),
            summary="wait for input",
        )
        if not waiting.applied:
            raise Stop(TerminationReason.SUSPEND_FAILED, error_type="SuspendRefused")
        self._input = None
        self._awaiting_input = True
        self._set_status(RunStatus.WAITING_FOR_INPUT)
        await self._project()
        await workflow.wait_condition(lambda: self._input is not None)
        message = self._input
        assert message is not None
        added = await call(
            ApprovalActivities.add_input,
            AddInputRequest(
                run_id=self._run_id,
                sequence=self._state.take_sequence(),
                round=round_no,
                message=message,
            ),
            opt.store_call(),
            summary="record input",
        )
        self._awaiting_input = False
        self._input = None
        if not added.applied:
            raise Stop(TerminationReason.INTERNAL_ERROR, error_type="InputRefused")
        self._set_status(RunStatus.RUNNING)
        await self._project()

    async def _project(self) -> None:
        """Show the committed state to the run's A2A task (idempotent per run revision)."""
        if self._task_id is None:
            return
        await call(
            A2AActivities.project,
            ProjectRequest(run_id=self._run_id, task_id=self._task_id),
            opt.store_call(),
            summary="project to A2A task",
        )

    # --- settling -------------------------------------------------------------------------

    async def _complete(self, answer_seq: int, reason: TerminationReason) -> RunResult:
        st = self._state
        try:
            settled = await call(
                RunActivities.complete,
                CompleteRequest(
                    run_id=self._run_id,
                    sequence=st.take_sequence(),
                    answer_sequence=answer_seq,
                    iterations=st.iterations,
                    truncated=st.truncated,
                    termination_reason=reason,
                    usage=st.usage,
                ),
                opt.completion_call(),
                summary="complete",
            )
        except ActivityError as err:
            # Never COMPLETED without its answer: the run fails instead.
            kind = error_type(err)
            reason = (
                TerminationReason.RESULT_NOT_RETAINABLE
                if kind == ErrorType.RESULT_NOT_RETAINABLE
                else TerminationReason.COMPLETION_FAILED
            )
            return await self._stop(Stop(reason, error_type=kind))
        if not settled.applied and settled.status is not RunStatus.COMPLETED:
            return await self._stop(
                Stop(
                    TerminationReason.INTERNAL_ERROR,
                    status=settled.status or RunStatus.FAILED,
                    error_type="AlreadySettled",
                    already_settled=True,
                )
            )
        # (Not applied but COMPLETED: an earlier execution — a reset — completed it.)
        return await self._finish(self._result(RunStatus.COMPLETED, Outcome.COMPLETED, reason))

    async def _settle(
        self, stop: Stop, actor: str | None = None, note: str | None = None
    ) -> RunResult:
        st = self._state
        if not stop.already_settled:
            await call(
                RunActivities.fail,
                FailRequest(
                    run_id=self._run_id,
                    sequence=st.take_sequence(),
                    reason=stop.reason,
                    iterations=st.iterations,
                    usage=st.usage,
                    error_type=stop.error_type,
                    status=stop.status,
                    outcome=stop.outcome,
                    actor=actor,
                    note=note,
                ),
                opt.store_call(),
                summary=f"settle {stop.status.value}",
            )
        return await self._finish(self._result(stop.status, stop.outcome, stop.reason))

    async def _stop(self, stop: Stop) -> NoReturn:
        result = await self._settle(stop)
        raise ApplicationError(
            f"run {stop.status.value.lower()}: {stop.reason.value}",
            result.model_dump(mode="json"),
            type=ErrorType.RUN_FAILED.value,
            non_retryable=True,
        )

    async def _cancelled(self) -> NoReturn:
        native = workflow.cancellation_reason()
        request = self._cancel or CancelRequest(by="temporal", reason=native or None)
        await self._settle(
            Stop(TerminationReason.CANCELLED, status=RunStatus.CANCELLED),
            actor=request.by,
            note=request.reason,
        )
        if native is not None:
            raise asyncio.CancelledError()  # the workflow shows Canceled in Temporal Web
        raise ApplicationError(
            f"run cancelled by {request.by}", type=ErrorType.RUN_CANCELLED.value, non_retryable=True
        )

    async def _finish(self, result: RunResult) -> RunResult:
        await self._project()
        self._finished = True
        self._gate.closed = True
        self._set_status(result.status)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result

    def _set_status(self, status: RunStatus) -> None:
        workflow.upsert_search_attributes([STATUS_KEY.value_set(status.value)])

    def _result(self, status: RunStatus, outcome: Outcome, reason: TerminationReason) -> RunResult:
        st = self._state
        return RunResult(
            run_id=self._run_id,
            status=status,
            outcome=outcome,
            termination_reason=reason,
            iterations=st.iterations,
            truncated=st.truncated,
            usage=st.usage,
        )
