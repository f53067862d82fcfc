"""AgentRunWorkflow: the bounded agent loop. Every I/O is an activity; the transcript lives
in the database and activities get references (run uuid, round, sequence)."""

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ActivityConfig

from workflows import _options as opt
from workflows._loop import LoopState, Route, Stop, route

with workflow.unsafe.imports_passed_through():
    from activities.fence import FenceActivities
    from activities.model import ModelActivities
    from activities.run import RunActivities
    from activities.tools import ToolActivities
    from activities.write import WriteActivities
    from contracts.enums import Outcome, RunStatus, TerminationReason
    from contracts.errors import ErrorType
    from contracts.ids import WORKFLOW_AGENT_RUN, idempotency_key
    from contracts.messages import ToolCall
    from contracts.profiles import RunPlan
    from contracts.run import (
        BeginRequest,
        CompleteRequest,
        FailRequest,
        FenceRequest,
        FenceState,
        ModelRequest,
        RefuseRequest,
        RunInput,
        RunResult,
        ToolCallRequest,
    )

# How often a write that no worker ever claimed may be scheduled again (fresh fence each).
MAX_WRITE_SCHEDULES = 5


P = TypeVar("P")
R = TypeVar("R")


async def _call(
    fn: Callable[[Any, P], Awaitable[R]], arg: P, config: ActivityConfig, *, summary: str
) -> R:
    """execute_activity_method with an ActivityConfig preset (one typed entry point)."""
    return await workflow.execute_activity_method(  # type: ignore[call-overload,no-any-return]
        fn, arg, summary=summary, **config
    )


def _error_type(err: ActivityError) -> str | None:
    cause = err.cause
    return cause.type if isinstance(cause, ApplicationError) else type(cause).__name__


@workflow.defn(name=WORKFLOW_AGENT_RUN)
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._state = LoopState()
        self._run_id = ""
        self._plan: RunPlan | None = None

    @workflow.run
    async def run(self, inp: RunInput) -> RunResult:
        self._run_id = inp.run_id
        try:
            begin = await _call(
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
                f"run could not begin: {_error_type(err)}",
                type=_error_type(err),
                non_retryable=True,
            ) from None
        self._plan = begin.plan
        self._state.next_sequence = begin.next_sequence
        try:
            answer_seq, reason = await self._loop(begin.plan)
        except Stop as stop:
            return await self._stop(stop)
        return await self._complete(answer_seq, reason)

    async def _loop(self, plan: RunPlan) -> tuple[int, TerminationReason]:
        st = self._state
        for round_no in range(1, plan.max_iterations + 1):
            seq = st.take_sequence()
            turn = await self._model(round_no, seq, offer_tools=True)
            st.iterations = round_no
            if not turn:
                return seq, TerminationReason.ANSWERED
            for call in turn:
                await self._tool(round_no, call)
        # Cap hit with tool calls handled: one tool-less call synthesises the answer.
        st.truncated = True
        seq = st.take_sequence()
        await self._model(plan.max_iterations + 1, seq, offer_tools=False)
        return seq, TerminationReason.MAX_ITERATIONS

    async def _model(self, round_no: int, seq: int, *, offer_tools: bool) -> list[ToolCall]:
        assert self._plan is not None
        try:
            turn = await _call(
                ModelActivities.complete,
                ModelRequest(
                    run_id=self._run_id, round=round_no, sequence=seq, offer_tools=offer_tools
                ),
                opt.model_call(self._plan.timeouts),
                summary=f"model {self._plan.model} round {round_no}",
            )
        except ActivityError as err:
            raise Stop(TerminationReason.PROVIDER_FAILED, error_type=_error_type(err)) from None
        self._state.usage = self._state.usage + turn.usage
        return turn.tool_calls

    async def _tool(self, round_no: int, call: ToolCall) -> None:
        assert self._plan is not None
        seq = self._state.take_sequence()
        kind, effect = route(call, self._plan)
        request = ToolCallRequest(
            run_id=self._run_id,
            round=round_no,
            sequence=seq,
            call=call,
            effect=effect,
            idempotency_key=idempotency_key(self._run_id, call.call_id),
        )
        if kind is Route.REFUSE:
            await _call(
                ToolActivities.refuse,
                RefuseRequest(
                    run_id=self._run_id,
                    round=round_no,
                    sequence=seq,
                    call=call,
                    reason=f"Tool {call.name!r} is not available to this agent.",
                ),
                opt.store_call(),
                summary=f"refuse {call.name}",
            )
        elif kind is Route.EXECUTE:
            await _call(
                ToolActivities.execute,
                request,
                opt.tool_call(self._plan.timeouts),
                summary=f"tool {call.name}",
            )
        else:
            await self._fenced_write(request)

    async def _fenced_write(self, request: ToolCallRequest) -> None:
        """Stamp, then one attempt; after a failure, the database says what happened."""
        assert self._plan is not None
        call = request.call
        for _ in range(MAX_WRITE_SCHEDULES):
            fence = FenceRequest(
                run_id=self._run_id,
                call_id=call.call_id,
                tool=call.name,
                token=str(workflow.uuid4()),
            )
            stamped = await _call(
                FenceActivities.stamp, fence, opt.store_call(), summary=f"fence {call.name}"
            )
            if stamped.state == FenceState.ALREADY_DONE:
                return  # reset or replay reached a finished write: never re-executed
            if stamped.state == FenceState.RUN_NOT_RUNNING:
                raise Stop(TerminationReason.INTERNAL_ERROR, error_type="RunNotRunning")
            if stamped.state != FenceState.STAMPED:
                raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type="FenceRefused")
            try:
                await _call(
                    WriteActivities.execute,
                    request.model_copy(update={"fence_token": fence.token}),
                    opt.write_call(self._plan.timeouts),
                    summary=f"write {call.name}",
                )
                return
            except ActivityError as err:
                workflow.logger.warning("write %s failed: %s", call.call_id, _error_type(err))
            verdict = await _call(
                FenceActivities.resolve, fence, opt.store_call(), summary=f"resolve {call.name}"
            )
            if verdict.state == FenceState.ALREADY_DONE:
                return
            if verdict.state == FenceState.INTERRUPTED:
                raise Stop(TerminationReason.INTERRUPTED_WRITE, error_type="OutcomeUnknown")
            # NEVER_CLAIMED: nothing happened; schedule again under a fresh fence.
            await workflow.sleep(timedelta(seconds=1))
        raise Stop(TerminationReason.INTERNAL_ERROR, error_type="WriteNeverStarted")

    async def _complete(self, answer_seq: int, reason: TerminationReason) -> RunResult:
        st = self._state
        try:
            settled = await _call(
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
            return await self._stop(
                Stop(TerminationReason.COMPLETION_FAILED, error_type=_error_type(err))
            )
        if not settled.applied and settled.status is RunStatus.COMPLETED:
            # Already completed by an earlier execution (a reset or a duplicate): the stored
            # answer stands and nothing is written again.
            return self._result(RunStatus.COMPLETED, Outcome.COMPLETED, reason)
        if not settled.applied:
            return await self._stop(
                Stop(
                    TerminationReason.INTERNAL_ERROR,
                    status=settled.status or RunStatus.FAILED,
                    error_type="AlreadySettled",
                    already_settled=True,
                )
            )
        return self._result(RunStatus.COMPLETED, Outcome.COMPLETED, reason)

    async def _stop(self, stop: Stop) -> NoReturn:
        st = self._state
        if not stop.already_settled:
            await _call(
                RunActivities.fail,
                FailRequest(
                    run_id=self._run_id,
                    sequence=st.take_sequence(),
                    reason=stop.reason,
                    iterations=st.iterations,
                    usage=st.usage,
                    error_type=stop.error_type,
                    status=stop.status,
                ),
                opt.store_call(),
                summary=f"settle {stop.status.value}",
            )
        result = self._result(stop.status, stop.outcome, stop.reason)
        raise ApplicationError(
            f"run {stop.status.value.lower()}: {stop.reason.value}",
            result.model_dump(mode="json"),
            type=ErrorType.RUN_FAILED.value,
            non_retryable=True,
        )

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
