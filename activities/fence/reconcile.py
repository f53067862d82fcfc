"""The write fence's reconciliation: ask an interrupted write's probe what became of it.

`write.reconcile` runs on the tool's queue, after the workflow made sure the interrupted
attempt can no longer land (workflows/fence.py). It calls the tool's probe (a read, so
the activity is retried) and acts on the answer in the store:
- applied: the step is recorded with the probe's result and the fence cleared, in one
  transaction (the write's own record, so the run reads as if the write had reported);
- not applied: the fence (outcome_unknown, its token) is emptied, so the workflow can
  stamp the write afresh under the same idempotency key. A retry of this step after its
  void committed (its worker died before reporting) finds the fence void already and
  answers "not applied" again (_sql.voided_before), never "unknown";
- unknown (or no probe on this worker): nothing changes; the run ends as without a probe.

`write.withdraw`: a write whose target waits for the operator's answer (a remote agent's
`input-required`), its run cancelled: the target is told to stop waiting (CancelTask).
"""

from collections.abc import Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from agentrt.activities._common import (
    ActivityGroup,
    db,
    fatal,
    fault,
    heartbeating,
    tool_context,
)
from agentrt.activities.fence import _sql
from agentrt.activities.ports import FaultHook, no_faults, probe_of, withdraw_of
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.tools import bounded
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_WRITE_RECONCILE, ACT_WRITE_WITHDRAW
from agentrt.contracts.reconcile import (
    APPLIED,
    NOT_APPLIED,
    UNKNOWN,
    ReconcileResult,
    Verdict,
    WithdrawRequest,
)
from agentrt.contracts.run import ToolCallRequest
from agentrt.store.db.context import StoreContext
from agentrt.store.steps.tools import ToolStep, ToolStepStore


def _target_failed(what: str, run_id: str, exc: Exception, kind: ErrorType) -> ApplicationError:
    """The failure of asking a write's target. The exception's text may quote the target
    (a host, a token): it is logged by type only, and stays out of the failure and history."""
    activity.logger.warning("%s in run %s failed: %s", what, run_id, type(exc).__name__)
    return ApplicationError(f"{what} failed", type=kind.value)


def uncounted(verdict: str) -> None:
    """No metrics: what the activity built without the worker's counters records."""


class ReconcileActivities(ActivityGroup):
    def __init__(
        self,
        *,
        ctx: StoreContext,
        registry: ToolRegistry,
        faults: FaultHook = no_faults,
        answered: Callable[[str], None] = uncounted,
    ) -> None:
        self._answered = answered  # an interrupted write's verdict, acted on (a metric)
        self._ctx = ctx
        self._steps = ToolStepStore(ctx)
        self._registry = registry
        self._faults = faults

    @activity.defn(name=ACT_WRITE_RECONCILE)
    async def reconcile(self, req: ToolCallRequest) -> ReconcileResult:
        """`req` is the interrupted write's request with its fence's token. Raises while the
        probe (or the store) cannot answer: the workflow retries, then gives up."""
        token = req.fence_token
        if token is None:
            raise fatal("reconciling a write needs its fence token", ErrorType.FENCE_REJECTED)
        async with heartbeating():
            await fault(self._faults, "reconcile.before_probe")
            verdict = await self._settle(req, token)
        # Once per interrupted write the run acts on: a retry only follows a failure.
        self._answered(verdict)
        return ReconcileResult(verdict=verdict)

    @activity.defn(name=ACT_WRITE_WITHDRAW)
    async def withdraw(self, req: WithdrawRequest) -> bool:
        """Tell a write's target that waits for the operator's answer to stop waiting: the
        run that asked was cancelled. Whether it was told (False: this worker's tool has no
        way to). Nothing in the store changes: the wait had emptied the fence, and the
        call recorded nothing."""
        tool = self._registry.get(req.tool)
        withdraw = withdraw_of(tool) if tool is not None else None
        if withdraw is None:
            activity.logger.warning("write %s cannot withdraw on this worker", req.tool)
            return False
        try:
            await withdraw(req.task_id, tool_context(req.run_id, req.call_id, req.idempotency_key))
        except Exception as exc:
            raise _target_failed(f"withdrawing {req.tool}", req.run_id, exc,
                                 ErrorType.WITHDRAW_FAILED) from None  # fmt: skip
        activity.logger.info("run %s: write %s withdrawn", req.run_id, req.call_id)
        return True

    async def _settle(self, req: ToolCallRequest, token: str) -> Verdict:
        """What became of the write, acted on in the store: the verdict the run goes on by."""
        call = req.call
        if await db(self._steps.result, req.idempotency_key) is not None:
            # Recorded after all (a record that committed as its worker died): the write's
            # own step stands; only its fence may be left to clear.
            await db(_sql.clear, self._ctx, req.run_id, token)
            return APPLIED
        if await db(_sql.was_voided, self._ctx, req.run_id, token, req.idempotency_key):
            # Voided by an earlier attempt of this step: the probe's answer then stands,
            # whatever it would say now (a target that went away must not undo it).
            activity.logger.warning("run %s: write %s already void", req.run_id, call.call_id)
            return NOT_APPLIED
        tool = self._registry.get(call.name)
        probe = probe_of(tool) if tool is not None else None
        if probe is None:
            activity.logger.warning("write %s has no probe on this worker", call.name)
            return UNKNOWN
        ctx = tool_context(req.run_id, call.call_id, req.idempotency_key)
        try:
            answer = await probe(call.arguments, ctx)
        except Exception as exc:  # retried by the workflow's policy
            raise _target_failed(f"probe of {call.name}", req.run_id, exc,
                                 ErrorType.PROBE_FAILED) from None  # fmt: skip
        activity.logger.warning(
            "run %s: write %s reconciled: %s", req.run_id, call.call_id, answer.verdict
        )
        if answer.verdict == APPLIED:
            await db(self._record, req, token, bounded(answer.result or ""))
            await fault(self._faults, "reconcile.after_record")
            return APPLIED
        if answer.verdict == NOT_APPLIED:
            voided = await db(_sql.void_unknown, self._ctx, req.run_id, token, req.idempotency_key)
            await fault(self._faults, "reconcile.after_void")
            return NOT_APPLIED if voided else UNKNOWN
        return UNKNOWN

    def _record(self, req: ToolCallRequest, token: str, content: str) -> None:
        """The write's step, as its own record would have been, and the fence cleared, in
        one transaction (insert-or-ignore: a retry after a commit changes nothing)."""
        step = ToolStep(
            run_id=req.run_id,
            sequence=req.sequence,
            round=req.round,
            call=req.call,
            effect=ToolEffect.NON_IDEMPOTENT_WRITE.value,
            content=content,
            is_error=False,
            privacy=req.privacy,
            idempotency_key=req.idempotency_key,
            extra={"reconciled": True},
        )
        clear = _sql.clear_part(req.run_id, token, fault="reconcile.before_clear")
        self._steps.record(step, also=[clear])
