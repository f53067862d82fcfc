"""Steering a run that exists, for `AgentRuntime` (starter/facade.py): each kind of answer
to where it counts (the one `answer` update, or the store for a resolution), its budget
query and its cancel. Reading a run is the base class's job (starter/_reading.py)."""

import asyncio
from datetime import timedelta

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.answers import RunAnswer
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.budget import BudgetState
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    RunNotAwaitingApprovalError,
    RunNotAwaitingReconciliationError,
    RunNotBegunError,
)
from agentrt.contracts.ids import QUERY_BUDGET
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
from agentrt.contracts.views import RunView
from agentrt.starter._deciding import cancel_workflow, checked_cancel, send_decision
from agentrt.starter._inputs import send_input_typed
from agentrt.starter._reading import RunReads
from agentrt.starter._reconciling import send_answer
from agentrt.starter._typed import temporal_errors_typed
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.resolution import resolve_write

# How long a budget query waits for a worker to answer (one that ended replays its history).
BUDGET_QUERY_TIMEOUT = timedelta(seconds=10)


class RunSteering(RunReads):
    """The answer, budget and cancel side of `AgentRuntime`, over its Temporal client and
    its store."""

    def _attestation_key(self) -> Sealer:
        # Whoever holds the seal key and the database is trusted to name the decider.
        return self._runs.sealer

    @temporal_errors_typed
    async def _answer(self, run_id: str, answer: RunAnswer) -> RunView:
        """Each kind to where it counts: a waiting run's answers by the one `answer` update,
        a resolution to the store (its run has ended). A typed error (or RunNotFoundError)
        before anything executes; never one for the run's outcome."""
        match answer:
            case ApprovalDecision():
                await self._decide(run_id, answer)
            case ReconcileAnswer():
                await self._reconcile(run_id, answer)
            case InputMessage():
                await send_input_typed(self._client, run_id, answer, self._runs.sealer)
            case WriteResolution():
                await self.status(run_id)  # RunNotFoundError for a run that does not exist
                await asyncio.to_thread(resolve_write, self._runs.ctx, run_id, answer)
        return await self.status(run_id)

    async def _decide(self, run_id: str, decision: ApprovalDecision) -> None:
        view = await self.status(run_id)
        if view.status is not RunStatus.WAITING_FOR_APPROVAL:
            raise RunNotAwaitingApprovalError(f"run {run_id} is {view.status.value}")
        pending = view.pending_approval
        digest = pending.turn_digest if pending is not None else None
        await send_decision(self._client, run_id, decision, self._runs.sealer, digest)

    async def _reconcile(self, run_id: str, answer: ReconcileAnswer) -> None:
        view = await self.status(run_id)
        if view.status is not RunStatus.AWAITING_RECONCILIATION:
            raise RunNotAwaitingReconciliationError(f"run {run_id} is {view.status.value}")
        await send_answer(self._client, run_id, answer, self._runs.sealer)

    @temporal_errors_typed
    async def budget(self, run_id: str) -> BudgetState:
        """The run's budget as its workflow holds it: the limits, the spend, what its calls
        in flight reserved and the room left (a worker answers, replaying a run that ended;
        a run still STARTING has spent and reserved nothing)."""
        if (await self.status(run_id)).status is RunStatus.STARTING:
            return BudgetState()
        state: BudgetState = await self._client.get_workflow_handle(run_id).query(
            QUERY_BUDGET, result_type=BudgetState, rpc_timeout=BUDGET_QUERY_TIMEOUT
        )
        return state

    @temporal_errors_typed
    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        """Ask the run to cancel. A run that already ended stays as it ended."""
        request = checked_cancel(by, reason)
        try:
            view = await self.status(run_id)
        except RunNotBegunError:
            # Its workflow closed without beginning it (failed, or withdrawn): it stays so.
            await cancel_workflow(self._client, run_id, request)
            return
        if view.status.terminal:
            return
        # A STARTING run too: the workflow begins, then settles the cancel, like any other.
        await cancel_workflow(self._client, run_id, request)
