"""Tool and write activities at their boundary (ActivityEnvironment, real database)."""

import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
from pydantic import ValidationError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.activities.tools import ToolActivities
from agentrt.activities.write import WriteActivities
from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import ToolCallRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.fence import FenceStore
from agentrt.store.runs import RunStore
from agentrt.store.tool_steps import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.conftest import FailTimes
from tests.workflows.test_failures import StoreAwayAt

MakeRuntime = Callable[[Callable[[str], None]], AbstractAsyncContextManager[AgentRuntime]]


def _run(parts: WorkerResources) -> str:
    run_id = str(uuid.uuid4())
    snapshot = '{"plan": {"privacy": "full"}, "tools": [], "instructions": ""}'
    RunStore(parts.ctx).begin(
        run_id=run_id, profile="auto", snapshot=snapshot, prompt="p", initiator="t", privacy="full"
    )
    return run_id


class Counter:
    def __init__(self, point: str) -> None:
        self.point, self.hits = point, 0

    def __call__(self, point: str) -> None:
        self.hits += point == self.point


async def test_an_idempotent_write_repeated_returns_the_first_result(
    parts: WorkerResources,
) -> None:
    run_id = _run(parts)
    invoked = Counter("tool.invoke")
    acts = ToolActivities(
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        steps=ToolStepStore(parts.ctx),
        faults=invoked,
    )
    call = ToolCall(call_id="r1.1", name="set_record", arguments={"key": f"k{run_id}", "value": 1})
    request = ToolCallRequest(
        run_id=run_id,
        round=1,
        sequence=1,
        call=call,
        effect=ToolEffect.IDEMPOTENT_WRITE,
        idempotency_key=idempotency_key(run_id, "r1.1"),
        privacy="full",
    )
    env = ActivityEnvironment()
    first = await env.run(acts.execute, request)
    again = await env.run(acts.execute, request.model_copy(update={"sequence": 2}))
    assert not first.replayed and again.replayed and invoked.hits == 1
    stored = ToolStepStore(parts.ctx).result(request.idempotency_key)
    assert stored is not None and stored.content == f"Set k{run_id}."


async def test_a_step_records_at_the_level_its_request_carries(parts: WorkerResources) -> None:
    run_id = _run(parts)  # recorded at `full`
    runs = RunStore(parts.ctx)
    acts = ToolActivities(
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        steps=ToolStepStore(parts.ctx),
    )
    request = ToolCallRequest(
        run_id=run_id,
        round=1,
        sequence=1,
        call=ToolCall(call_id="r1.1", name="lookup_order", arguments={"order_id": "1042"}),
        effect=ToolEffect.READ_ONLY,
        idempotency_key=idempotency_key(run_id, "r1.1"),
        privacy="metadata",
    )
    await ActivityEnvironment().run(acts.execute, request)
    tool = next(e for e in runs.events(run_id) if e.kind is EventKind.TOOL)
    # The workflow's level is used as it is (the plan travels in the request).
    assert tool.payload["content_withheld"] is True and "arguments" not in tool.payload
    # A request without the level is no request: there is no fallback to fall back on.
    with pytest.raises(ValidationError):
        ToolCallRequest.model_validate(request.model_dump(exclude={"privacy"}))


async def test_a_write_on_a_run_with_no_row_is_refused_before_it_runs(
    parts: WorkerResources,
) -> None:
    ghost = str(uuid.uuid4())
    acts = WriteActivities(
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        fence=FenceStore(parts.ctx),
        steps=ToolStepStore(parts.ctx),
        runs=RunStore(parts.ctx),
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
        fence_token="t",
        privacy="full",
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
