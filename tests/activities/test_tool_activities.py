"""Tool activities at their boundary (ActivityEnvironment, real database). The write's are
in tests/fence."""

import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.activities.tools import ToolActivities
from agentrt.contracts.enums import EventKind, ToolEffect
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import ToolCallRequest
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import begin_run, tool_request


class Counter:
    def __init__(self, point: str) -> None:
        self.point, self.hits = point, 0

    def __call__(self, point: str) -> None:
        self.hits += point == self.point


async def test_an_idempotent_write_repeated_returns_the_first_result(
    parts: WorkerResources,
) -> None:
    run_id = begin_run(parts)
    invoked = Counter("tool.invoke")
    acts = ToolActivities(
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        steps=ToolStepStore(parts.ctx),
        faults=invoked,
    )
    arguments = {"key": f"k{run_id}", "value": 1}
    request = tool_request(run_id, "set_record", arguments, effect=ToolEffect.IDEMPOTENT_WRITE)
    env = ActivityEnvironment()
    first = await env.run(acts.execute, request)
    again = await env.run(acts.execute, request.model_copy(update={"sequence": 2}))
    assert not first.replayed and again.replayed and invoked.hits == 1
    stored = ToolStepStore(parts.ctx).result(request.idempotency_key)
    assert stored is not None and stored.content == f"Set k{run_id}."


async def test_a_step_records_at_the_level_its_request_carries(parts: WorkerResources) -> None:
    run_id = begin_run(parts)  # recorded at `full`
    runs = RunStore(parts.ctx)
    acts = ToolActivities(
        registry=ToolRegistry(demo_tools(DemoWorld(parts.ctx))),
        steps=ToolStepStore(parts.ctx),
    )
    request = tool_request(run_id, "lookup_order", {"order_id": "1042"}, privacy="metadata")
    await ActivityEnvironment().run(acts.execute, request)
    tool = next(e for e in runs.events(run_id) if e.kind is EventKind.TOOL)
    # The workflow's level is used as it is: the snapshot is not read for it.
    assert tool.payload["content_withheld"] is True and "arguments" not in tool.payload


def test_a_tool_request_without_the_runs_level_is_refused() -> None:
    """The level is required (the workflow always sends its plan's): no tool or write
    activity falls back to reading it from the run's snapshot."""
    with pytest.raises(ValidationError):
        ToolCallRequest(
            run_id="r",
            round=1,
            sequence=1,
            call=ToolCall(call_id="r1.1", name="lookup_order", arguments={}),
            effect=ToolEffect.READ_ONLY,
            idempotency_key="r:r1.1",
        )  # type: ignore[call-arg]
