"""`write.reconcile` tells its verdict once per interrupted write it settles, whichever way
it found it (the worker counts it as agentrt_writes_reconciled_total): a write recorded
after all, and a write with no probe on this worker, count as applied and unknown; a probe
that raises tells nothing (the activity is retried). At the activity's boundary
(ActivityEnvironment), on the suite's database."""

from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt import Reconciled, tool
from agentrt.activities.fence import ReconcileActivities
from agentrt.activities.registry import ToolRegistry
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.run import ToolCallRequest
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import begin_run, tool_request


def _request(parts: WorkerResources) -> ToolCallRequest:
    return tool_request(
        begin_run(parts), "pay", {"invoice": "inv-7"},
        effect=ToolEffect.NON_IDEMPOTENT_WRITE, fence_token="token-1",
    )  # fmt: skip


def _failing_probe(key: str, arguments: dict[str, Any]) -> Reconciled:
    raise ConnectionError("the payments API is down")


@tool(reconcile=_failing_probe)
def pay(invoice: str) -> str:
    """Pay an invoice (not idempotent)."""
    return f"paid {invoice}"


async def _reconciled(parts: WorkerResources, tools: list[Any], req: ToolCallRequest) -> str:
    told: list[str] = []
    acts = ReconcileActivities(ctx=parts.ctx, registry=ToolRegistry(tools), answered=told.append)
    result = await ActivityEnvironment().run(acts.reconcile, req)
    assert told == [result.verdict]  # told once, what it returned
    return result.verdict


async def test_a_write_recorded_after_all_is_told_applied(parts: WorkerResources) -> None:
    req = _request(parts)
    ToolStepStore(parts.ctx).record(
        run_id=req.run_id, sequence=req.sequence, round=req.round, call=req.call,
        effect=ToolEffect.NON_IDEMPOTENT_WRITE.value, content="paid inv-7", is_error=False,
        privacy=req.privacy, idempotency_key=req.idempotency_key,
    )  # fmt: skip
    assert await _reconciled(parts, [pay], req) == "applied"  # the probe was never asked


async def test_a_write_with_no_probe_on_this_worker_is_told_unknown(
    parts: WorkerResources,
) -> None:
    assert await _reconciled(parts, [], _request(parts)) == "unknown"


async def test_a_probe_that_raises_tells_nothing(parts: WorkerResources) -> None:
    told: list[str] = []
    acts = ReconcileActivities(ctx=parts.ctx, registry=ToolRegistry([pay]), answered=told.append)
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(acts.reconcile, _request(parts))
    assert err.value.type == ErrorType.PROBE_FAILED
    assert told == []
