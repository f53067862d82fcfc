"""A read whose step rides with the next write (issue 45, contracts/deferred.py) carries its
rows through Temporal's history: sealed with the store's key, the event's payload filtered
to the run's privacy level first. At every level the activity's result holds no content in
the clear, and the rows it carries are exactly the rows the call would have written."""

import uuid

import pytest
from temporalio.testing import ActivityEnvironment

from agentrt import tool
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.activities.tools import DEFER_MAX_SEALED, ToolActivities
from agentrt.contracts.deferred import RecordDeferredRequest
from agentrt.contracts.enums import EventKind, ToolEffect
from agentrt.contracts.profiles import PrivacyLevel
from agentrt.core.temporal import data_converter
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import begin_run, tool_request

LEVELS: list[PrivacyLevel] = ["full", "redacted", "metadata", "none"]


def _acts(parts: WorkerResources) -> ToolActivities:
    world = DemoWorld(parts.ctx)
    return ToolActivities(registry=ToolRegistry(demo_tools(world)), steps=ToolStepStore(parts.ctx))


def _tool_payload(runs: RunStore, run_id: str) -> dict[str, object]:
    [tool] = [e for e in runs.events(run_id) if e.kind is EventKind.TOOL]
    return dict(tool.payload)


@pytest.mark.parametrize("level", LEVELS)
async def test_a_deferred_read_carries_only_its_sealed_rows(
    parts: WorkerResources, level: PrivacyLevel
) -> None:
    canary = f"CNY{uuid.uuid4().hex}"  # in the call's arguments and in its result
    acts, runs, env = _acts(parts), RunStore(parts.ctx), ActivityEnvironment()
    deferred_run, direct_run = begin_run(parts), begin_run(parts)

    request = tool_request(deferred_run, "lookup_order", {"order_id": canary}, privacy=level)
    result = await env.run(acts.execute, request.model_copy(update={"defer": True}))
    assert result.deferred is not None and not result.is_error
    # What enters history: the result as the workers' converter encodes it (no payload
    # codec here: with AGENTRT_PAYLOAD_KEYS it is encrypted once more).
    [encoded] = await data_converter().encode([result])
    assert canary not in encoded.data.decode()
    # Nothing written yet: the rows ride with the next write.
    assert runs.events(deferred_run)[-1].kind is EventKind.RUN_STARTED
    assert all(m.role != "tool" for m in runs.transcript(deferred_run))

    # Written as they came, they are the rows the call writes itself at that level.
    await env.run(
        acts.record_deferred,
        RecordDeferredRequest(run_id=deferred_run, steps=[result.deferred]),
    )
    await env.run(acts.execute, tool_request(direct_run, "lookup_order", {"order_id": canary},
                                             privacy=level))  # fmt: skip
    deferred, direct = _tool_payload(runs, deferred_run), _tool_payload(runs, direct_run)
    deferred.pop("duration_ms", None), direct.pop("duration_ms", None)
    assert deferred == direct
    # The level's filter held: `redacted` masks what its patterns find (a bare id is
    # kept), `metadata` and `none` keep no content at all.
    kept = canary in str(deferred)
    assert kept is (level in ("full", "redacted")), deferred
    if level in ("metadata", "none"):
        assert deferred["content_withheld"] is True
    [message] = [m for m in runs.transcript(deferred_run) if m.role == "tool"]
    [written] = [m for m in runs.transcript(direct_run) if m.role == "tool"]
    assert message == written and canary in message.content  # the model reads the result


async def test_a_write_is_never_deferred(parts: WorkerResources) -> None:
    """Only a READ_ONLY call defers: an idempotent write's step is its dedup ledger."""
    run_id = begin_run(parts)
    request = tool_request(run_id, "set_record", {"key": f"k{run_id}", "value": 1},
                           effect=ToolEffect.IDEMPOTENT_WRITE)  # fmt: skip
    result = await ActivityEnvironment().run(
        _acts(parts).execute, request.model_copy(update={"defer": True})
    )
    assert result.deferred is None
    assert any(e.kind is EventKind.TOOL for e in RunStore(parts.ctx).events(run_id))


@tool(effect=ToolEffect.READ_ONLY)
def long_read(size: int) -> str:
    """A read whose result is `size` characters long."""
    return "x" * size


async def test_a_long_read_is_recorded_at_once_not_carried_through_history(
    parts: WorkerResources,
) -> None:
    """A read whose sealed rows pass DEFER_MAX_SEALED is written by its activity, as before:
    history carries no long result, sealed or not."""
    run_id = begin_run(parts)
    acts = ToolActivities(registry=ToolRegistry([long_read]), steps=ToolStepStore(parts.ctx))
    env = ActivityEnvironment()
    short = tool_request(run_id, "long_read", {"size": 100}).model_copy(update={"defer": True})
    assert (await env.run(acts.execute, short)).deferred is not None
    long = short.model_copy(update={"sequence": 2})
    long = long.model_copy(update={"call": long.call.model_copy(update={
        "call_id": "r1.2", "arguments": {"size": DEFER_MAX_SEALED}})})  # fmt: skip
    assert (await env.run(acts.execute, long)).deferred is None
    [written] = [e for e in RunStore(parts.ctx).events(run_id) if e.kind is EventKind.TOOL]
    assert written.sequence == 2
