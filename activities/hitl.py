"""Human-in-the-loop activities: persist a suspension for approval and its decision, a
pause for input and the input (guarded transitions)."""

from collections.abc import Callable
from typing import Any, Protocol

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db, privacy_of
from agentrt.activities.ports import RunPort
from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import (
    ACT_RUN_ADD_INPUT,
    ACT_RUN_AWAIT_INPUT,
    ACT_RUN_RESUME,
    ACT_RUN_SUSPEND,
)
from agentrt.contracts.messages import Usage
from agentrt.contracts.run import (
    AddInputRequest,
    AtRunLevel,
    AwaitInputRequest,
    ResumeRequest,
    SuspendRequest,
    Transition,
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

    def refuse_unattested(
        self, *, run_id: str, sequence: int, round: int, decision: ApprovalDecision, privacy: str
    ) -> bool: ...

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


class HitlActivities(ActivityGroup):
    def __init__(self, *, hitl: HitlPort, runs: RunPort) -> None:
        self._hitl = hitl
        self._runs = runs

    async def _transition(
        self, to: RunStatus, store: Callable[..., RunStatus | None], req: AtRunLevel, **fields: Any
    ) -> Transition:
        """One guarded status change in the store, at the run's privacy level: applied when
        the run is now in `to`; otherwise the status that refused it."""
        privacy = await privacy_of(self._runs, req)
        status = await db(store, run_id=req.run_id, privacy=privacy, **fields)
        return Transition(applied=status is to, status=status)

    @activity.defn(name=ACT_RUN_SUSPEND)
    async def suspend(self, req: SuspendRequest) -> Transition:
        return await self._transition(
            RunStatus.WAITING_FOR_APPROVAL, self._hitl.suspend, req,
            sequence=req.sequence, pending=req.pending, iterations=req.iterations,
            usage=req.usage,
        )  # fmt: skip

    @activity.defn(name=ACT_RUN_RESUME)
    async def resume(self, req: ResumeRequest) -> Transition:
        """Record the decision and resume the run, only if it counts: where the profile
        requires attested decisions, one whose attestation does not open is refused here
        (the workflow holds no key to check it) and the run keeps waiting."""
        if req.attested_only:
            privacy = await privacy_of(self._runs, req)
            refused = await db(
                self._hitl.refuse_unattested, run_id=req.run_id, sequence=req.sequence,
                round=req.round, decision=req.decision, privacy=privacy,
            )  # fmt: skip
            if refused:
                return Transition(
                    applied=False,
                    status=RunStatus.WAITING_FOR_APPROVAL,
                    refusal=ErrorType.UNATTESTED_DECISION.value,
                )
        return await self._transition(
            RunStatus.RUNNING, self._hitl.resume, req,
            sequence=req.sequence, round=req.round, decision=req.decision,
        )  # fmt: skip

    @activity.defn(name=ACT_RUN_AWAIT_INPUT)
    async def await_input(self, req: AwaitInputRequest) -> Transition:
        return await self._transition(
            RunStatus.WAITING_FOR_INPUT, self._hitl.await_input, req,
            sequence=req.sequence, round=req.round, iterations=req.iterations, usage=req.usage,
        )  # fmt: skip

    @activity.defn(name=ACT_RUN_ADD_INPUT)
    async def add_input(self, req: AddInputRequest) -> Transition:
        return await self._transition(
            RunStatus.RUNNING, self._hitl.add_input, req,
            sequence=req.sequence, round=req.round, message=req.message,
        )  # fmt: skip
