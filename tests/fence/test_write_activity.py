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
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import ToolCallRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
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
    call = ToolCall(
        call_id="r1.1", name="issue_refund", arguments={"order_id": "1042", "amount_cents": 5}
    )
    request = ToolCallRequest(
        run_id=ghost,
        round=1,
        sequence=1,
        call=call,
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        idempotency_key=idempotency_key(ghost, "r1.1"),
        privacy="full",
        fence_token="t",
    )
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(acts.execute, request)
    assert err.value.type == ErrorType.RUN_NOT_FOUND and err.value.non_retryable
    assert DemoWorld(parts.ctx).ledger_count(run_id=ghost) == 0


async def test_a_write_whose_audit_cannot_be_persisted_fails_the_run_and_is_not_retried(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    hook = FailTimes("record.before_clear", times=100)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "Please refund order 1042")
    assert hook.reached == 1  # one attempt: never retried
    assert view.status is RunStatus.FAILED and view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert view.pending_effect is not None and view.pending_effect.state == "outcome_unknown"
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 1  # it did run, once


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
