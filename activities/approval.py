"""Approval activities: persist a suspension and a decision (guarded transitions)."""

from typing import Protocol

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db, privacy_of
from agentrt.activities.ports import RunPort
from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.ids import (
    ACT_RUN_ADD_INPUT,
    ACT_RUN_AWAIT_INPUT,
    ACT_RUN_RESUME,
    ACT_RUN_SUSPEND,
)
from agentrt.contracts.messages import Usage
from agentrt.contracts.run import (
    AddInputRequest,
    AwaitInputRequest,
    ResumeRequest,
    SuspendRequest,
    TransitionResult,
)


class HitlPort(Protocol):
    def suspend(
        self,
        *,
        run_id: str,
        sequence: int,
        pending: PendingApproval,
        privacy: str,
        iterations: int = 0,
        usage: Usage | None = None,
    ) -> RunStatus | None: ...

    def resume(
        self, *, run_id: str, sequence: int, round: int, decision: ApprovalDecision, privacy: str
    ) -> RunStatus | None: ...

    def await_input(
        self,
        *,
        run_id: str,
        sequence: int,
        round: int,
        privacy: str,
        iterations: int = 0,
        usage: Usage | None = None,
    ) -> RunStatus | None: ...

    def add_input(
        self, *, run_id: str, sequence: int, round: int, message: InputMessage, privacy: str
    ) -> RunStatus | None: ...


class ApprovalActivities(ActivityGroup):
    def __init__(self, *, hitl: HitlPort, runs: RunPort) -> None:
        self._hitl = hitl
        self._runs = runs

    @activity.defn(name=ACT_RUN_SUSPEND)
    async def suspend(self, req: SuspendRequest) -> TransitionResult:
        privacy = await privacy_of(self._runs, req.run_id)
        status = await db(
            self._hitl.suspend,
            run_id=req.run_id,
            sequence=req.sequence,
            pending=req.pending,
            privacy=privacy,
            iterations=req.iterations,
            usage=req.usage,
        )
        return TransitionResult(applied=status is RunStatus.WAITING_FOR_APPROVAL, status=status)

    @activity.defn(name=ACT_RUN_RESUME)
    async def resume(self, req: ResumeRequest) -> TransitionResult:
        privacy = await privacy_of(self._runs, req.run_id)
        status = await db(
            self._hitl.resume,
            run_id=req.run_id,
            sequence=req.sequence,
            round=req.round,
            decision=req.decision,
            privacy=privacy,
        )
        return TransitionResult(applied=status is RunStatus.RUNNING, status=status)

    @activity.defn(name=ACT_RUN_AWAIT_INPUT)
    async def await_input(self, req: AwaitInputRequest) -> TransitionResult:
        privacy = await privacy_of(self._runs, req.run_id)
        status = await db(
            self._hitl.await_input,
            run_id=req.run_id,
            sequence=req.sequence,
            round=req.round,
            privacy=privacy,
            iterations=req.iterations,
            usage=req.usage,
        )
        return TransitionResult(applied=status is RunStatus.WAITING_FOR_INPUT, status=status)

    @activity.defn(name=ACT_RUN_ADD_INPUT)
    async def add_input(self, req: AddInputRequest) -> TransitionResult:
        privacy = await privacy_of(self._runs, req.run_id)
        status = await db(
            self._hitl.add_input,
            run_id=req.run_id,
            sequence=req.sequence,
            round=req.round,
            message=req.message,
            privacy=privacy,
        )
        return TransitionResult(applied=status is RunStatus.RUNNING, status=status)
