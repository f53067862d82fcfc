"""The write activity at its boundary (ActivityEnvironment, real database) and its
failures in a run: refused before it runs, an audit that cannot be persisted, a brief
outage at the record."""

import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities.fence import WriteActivities
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import tool_request
from tests.conftest import FailTimes
from tests.workflows.test_failures import StoreAwayAt

MakeRuntime = Callable[[Callable[[str], None]], AbstractAsyncContextManager[AgentRuntime]]


async def test_a_write_on_a_run_with_no_row_is_refused_before_it_runs(
    parts: WorkerResources,
) -> None:
    ghost = str(uuid.uuid4())
    assert parts.executor is not None
    acts = WriteActivities(
        ctx=parts.ctx,
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        executor=parts.executor,
    )
    request = tool_request(
        ghost,
        "issue_refund",
        {"order_id": "1042", "amount_cents": 5},
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        fence_token="t",
    )
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(acts.execute, request)
    assert err.value.type == ErrorType.RUN_NOT_FOUND and err.value.non_retryable
    assert DemoWorld(parts.ctx).ledger_count(run_id=ghost) == 0


class FailAt:
    """Fails at every point named, counting each reach."""

    def __init__(self, *points: str) -> None:
        self.reached = dict.fromkeys(points, 0)

    def __call__(self, point: str) -> None:
        if point in self.reached:
            self.reached[point] += 1
            raise RuntimeError(f"injected fault at {point}")


async def test_a_write_whose_audit_cannot_be_persisted_fails_the_run_and_is_not_retried(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    """With its probe failing too (the refund's probe reads the ledger): no answer."""
    hook = FailAt("record.before_clear", "reconcile.before_probe")
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "Please refund order 1042")
    assert hook.reached["record.before_clear"] == 1  # one attempt: never retried
    assert hook.reached["reconcile.before_probe"] == 5  # the probe, retried, then given up
    assert view.status is RunStatus.FAILED and view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert view.pending_effect is not None and view.pending_effect.state == "outcome_unknown"
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 1  # it did run, once


async def test_a_write_whose_audit_cannot_be_persisted_is_reconciled_by_its_probe(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    """The refund ran; its record failed; the ledger probe finds the row: the step is
    recorded with the probe's result and the run completes, with one refund."""
    hook = FailTimes("record.before_clear", times=100)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "Please refund order 1042")
        events = await runtime.events(view.run_id)
    assert hook.reached == 1
    assert view.status is RunStatus.COMPLETED and view.pending_effect is None
    [refund] = [e for e in events if e.payload.get("tool") == "issue_refund"]
    assert refund.payload["reconciled"] is True
    assert "found in the ledger" in refund.payload["result"]
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 1


async def test_a_write_whose_record_meets_a_brief_store_outage_is_recorded_once(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    """The effect ran and its outcome is known: a dropped connection at the record step is
    retried (the record is idempotent) instead of ending the run with outcome unknown."""
    hook = StoreAwayAt("record.before_clear", times=2)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "Please refund order 1042")
    assert hook.left == 0
    assert view.status is RunStatus.COMPLETED
    assert view.pending_effect is None  # the fence was cleared by the record
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 1
