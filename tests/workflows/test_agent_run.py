"""End to end on a real dev server and a real database."""

import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import SearchAttributeKey
from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import InvalidRequestError, UnknownProfileError
from agentrt.contracts.ids import SA_RUN_STATUS
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from tests.workflows._raw import start_raw
from tests.workflows._replay import assert_replays, fetch


async def test_demo_run_completes_with_events_in_order(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    view = await runtime.run("auto", "Please refund order 1042")
    assert view.status is RunStatus.COMPLETED
    assert view.outcome is Outcome.COMPLETED
    assert view.termination_reason is TerminationReason.ANSWERED
    assert view.answer is not None and "refunded" in view.answer
    assert view.iterations == 3
    events = await runtime.events(view.run_id)
    assert [e.kind for e in events] == [
        EventKind.RUN_STARTED,
        EventKind.LLM,
        EventKind.TOOL,
        EventKind.LLM,
        EventKind.TOOL,
        EventKind.LLM,
        EventKind.RUN_COMPLETED,
    ]
    assert [e.sequence for e in events] == list(range(7))
    assert events[2].payload["tool"] == "lookup_order"
    assert events[4].payload["tool"] == "issue_refund"
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 1
    assert view.prompt_tokens > 0 and view.completion_tokens > 0


async def test_iteration_cap_synthesises_a_truncated_answer(
    runtime: AgentRuntime, worker: Worker
) -> None:
    view = await runtime.run("auto", "loop forever", max_iterations=2)
    assert view.status is RunStatus.COMPLETED
    assert view.truncated is True
    assert view.termination_reason is TerminationReason.MAX_ITERATIONS
    assert view.iterations == 2
    assert view.answer == "Synthesised after the cap."
    kinds = [e.kind for e in await runtime.events(view.run_id)]
    # two rounds with a tool each, then one tool-less model call
    assert kinds.count(EventKind.LLM) == 3 and kinds.count(EventKind.TOOL) == 2


async def test_default_cap_is_five_and_an_explicit_cap_over_twenty_is_refused(
    runtime: AgentRuntime, worker: Worker
) -> None:
    default = await runtime.run("auto", "loop forever")
    assert default.iterations == 5 and default.truncated
    # One bound (issue 26): past the ceiling a start is refused, not clamped.
    with pytest.raises(InvalidRequestError, match="between 1 and 20"):
        await runtime.run("auto", "loop forever", max_iterations=50)
    at_ceiling = await runtime.run("auto", "loop forever", max_iterations=20)
    assert at_ceiling.iterations == 20 and at_ceiling.truncated


async def test_unknown_tool_is_refused_fail_soft(runtime: AgentRuntime, worker: Worker) -> None:
    view = await runtime.run("auto", "use an unknown tool please")
    assert view.status is RunStatus.COMPLETED
    tool = next(e for e in await runtime.events(view.run_id) if e.kind is EventKind.TOOL)
    assert tool.payload["is_error"] is True
    assert "not available" in tool.payload["result"]


async def test_malformed_arguments_reach_the_model_as_an_error_and_write_nothing(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    view = await runtime.run("auto", "bad args")
    assert view.status is RunStatus.COMPLETED
    tool = next(e for e in await runtime.events(view.run_id) if e.kind is EventKind.TOOL)
    assert tool.payload["is_error"] is True
    assert "amount_cents" in tool.payload["result"]
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 0
    assert view.pending_effect is None  # the fence was cleared with the recorded step


async def test_runs_are_searchable_by_status_and_profile(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    view = await runtime.run("auto", "what about my order?")
    desc = await client.get_workflow_handle(view.run_id).describe()
    attrs = {k.name: v for k, v in desc.typed_search_attributes}
    assert attrs["AgentProfile"] == "auto"
    assert attrs["AgentRunStatus"] == "COMPLETED"


STATUS = SearchAttributeKey.for_keyword(SA_RUN_STATUS)


async def _status_upserts(client: Client, run_id: str) -> list[str]:
    """The AgentRunStatus values the workflow itself upserted, in order ('' for a removal)."""
    upserts = []
    async for e in client.get_workflow_handle(run_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            fields = e.upsert_workflow_search_attributes_event_attributes.search_attributes
            if SA_RUN_STATUS in fields.indexed_fields:
                upserts.append(fields.indexed_fields[SA_RUN_STATUS].data.decode().strip('"'))
    return upserts


async def test_a_run_starts_running_and_the_workflow_upserts_only_its_end(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    """The facade starts the run with AgentRunStatus=RUNNING, so the workflow upserts no
    RUNNING of its own when it begins: its one status upsert is the terminal one."""
    view = await runtime.run("auto", "what about my order?")
    assert await _status_upserts(client, view.run_id) == ["COMPLETED"]
    desc = await client.get_workflow_handle(view.run_id).describe()
    assert desc.typed_search_attributes.get(STATUS) == "COMPLETED"


async def test_a_run_started_without_a_status_upserts_running_itself(
    worker: Worker, client: Client, task_queue: str
) -> None:
    """A starter that sets no status (an older facade, a raw Temporal client): the workflow
    marks the run RUNNING once it has begun, as before."""
    run_id, handle = await start_raw(client, task_queue, "auto", "what about my order?")
    result = await handle.result()
    assert result.status is RunStatus.COMPLETED
    assert await _status_upserts(client, run_id) == ["RUNNING", "COMPLETED"]


async def test_a_run_that_never_began_has_no_status(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    run_id = str(uuid.uuid4())
    with pytest.raises(UnknownProfileError):
        await runtime.start("nosuch", "hello", run_id=run_id)
    handle = client.get_workflow_handle(run_id)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert await _status_upserts(client, run_id) == [""]
    assert (await handle.describe()).typed_search_attributes.get(STATUS) is None


async def test_a_new_run_records_no_patch_marker(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    """A run of this build takes every patched path without asking (workflows/patches.py):
    no patch marker and no TemporalChangeVersion upsert, where a run recorded one of each
    before (two of each in 0.3.0); its history still replays, the probe at its start
    finding no marker. Runs that began with markers replay in test_replay.py and go on in
    tests/workflows/test_patches.py."""
    view = await runtime.run("auto", "what about my order?")
    markers = upserts = 0
    async for e in client.get_workflow_handle(view.run_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            markers += e.marker_recorded_event_attributes.marker_name == "core_patch"
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            fields = e.upsert_workflow_search_attributes_event_attributes.search_attributes
            upserts += "TemporalChangeVersion" in fields.indexed_fields
    assert (markers, upserts) == (0, 0)
    await assert_replays(await fetch(client, view.run_id))
