"""Long runs (issue 30): a raised ceiling, and runs that continue as new past
`segment_rounds`, on a real dev server, a real worker and the suite's database."""

import json
import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory

from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.errors import ConfigError, InvalidRequestError
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from tests._built import built
from tests.workflows._replay import patches, replayer
from tests.workflows._waiting import decide, until, until_status

PRICES = "providers:\n  - name: scripted\n    prices: {default: {input: 1, output: 2}}\n"
CEILING = 100
HISTORIES = Path(__file__).resolve().parents[1] / "histories"


class Long:
    def __init__(self, runtime: AgentRuntime, parts: WorkerResources) -> None:
        self.runtime, self.parts = runtime, parts


Serving = Callable[[int], AbstractAsyncContextManager[Long]]


@pytest.fixture
def long_runs(client: Client, settings: Settings, tmp_path: Path) -> Serving:
    """A worker under a raised ceiling whose runs continue as new every `segment_rounds`
    rounds, with priced model calls, and a runtime under the same ceiling."""
    (tmp_path / "providers.yaml").write_text(PRICES)

    @asynccontextmanager
    async def serve(segment_rounds: int) -> AsyncIterator[Long]:
        own = settings.replace(
            limits={"max_iterations_ceiling": CEILING, "segment_rounds": segment_rounds},
            providers={"file": tmp_path / "providers.yaml"},
        )
        queue = f"tq-{uuid.uuid4().hex[:10]}"
        with built(own) as parts:
            async with make_worker(client, parts, own.replace(temporal={"task_queue": queue})):
                runtime = AgentRuntime(
                    client, RunStore(parts.ctx), queue, max_iterations_ceiling=CEILING
                )
                yield Long(runtime, parts)

    return serve


async def segments(client: Client, run_id: str) -> list[list[HistoryEvent]]:
    """Each history segment of the run, first to last (walked back from the latest)."""
    latest = (await client.get_workflow_handle(run_id).describe()).run_id
    out: list[list[HistoryEvent]] = []
    run: str | None = latest
    while run:
        handle = client.get_workflow_handle(run_id, run_id=run)
        events = [e async for e in handle.fetch_history_events()]
        out.append(events)
        run = events[0].workflow_execution_started_event_attributes.continued_execution_run_id
    return out[::-1]


async def test_a_run_of_100_tool_calls_completes_across_segments(
    long_runs: Serving, client: Client
) -> None:
    async with long_runs(40) as long:
        view = await long.runtime.run("auto", "loop forever", max_iterations=100)
        events = await long.runtime.events(view.run_id)
    assert view.status is RunStatus.COMPLETED
    assert view.termination_reason is TerminationReason.MAX_ITERATIONS
    assert view.iterations == 100 and view.truncated
    assert view.answer == "Synthesised after the cap."
    kinds = [e.kind for e in events]
    assert kinds == [
        EventKind.RUN_STARTED,
        *[EventKind.LLM, EventKind.TOOL] * 100,
        EventKind.LLM,
        EventKind.RUN_COMPLETED,
    ]
    assert [e.sequence for e in events] == list(range(len(events)))  # whole, no duplicate
    llm = [e.payload for e in events if e.kind is EventKind.LLM]
    assert view.prompt_tokens == sum(p["prompt_tokens"] for p in llm) > 0
    assert view.completion_tokens == sum(p["completion_tokens"] for p in llm) > 0
    assert view.cost_usd == pytest.approx(sum(p["cost_usd"] for p in llm))
    assert view.cost_usd > 0
    parts = await segments(client, view.run_id)
    assert len(parts) == 3  # rounds 1-40, 41-80, 81-100 and the answer
    for seg in parts[:-1]:
        assert seg[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    assert parts[-1][-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
    # Each segment's history is bounded by its rounds, not by the run's. (About 4.2 kB a
    # round: each read's sealed rows, about 0.6 kB here, pass through it twice since they
    # ride with the next model call: workflows/riding.py.)
    sizes = [sum(e.ByteSize() for e in seg) for seg in parts]
    assert max(sizes) < 2 * min(sizes[:2]) and max(sizes) < 200_000
    status = await client.get_workflow_handle(view.run_id).describe()
    assert status.typed_search_attributes is not None
    assert {k.name: v for k, v in status.typed_search_attributes}["AgentRunStatus"] == ("COMPLETED")


async def test_a_write_in_the_second_segment_keeps_its_fence(
    long_runs: Serving, client: Client
) -> None:
    async with long_runs(3) as long:
        view = await long.runtime.run("auto", "long write", max_iterations=10)
        tools = [e for e in await long.runtime.events(view.run_id) if e.kind is EventKind.TOOL]
        ledger = DemoWorld(long.parts.ctx).ledger_count(run_id=view.run_id)
    assert view.status is RunStatus.COMPLETED
    assert view.answer == "Refunded after a long look."
    assert len(await segments(client, view.run_id)) == 2  # rounds 1-3, then 4-6
    assert ledger == 1  # the write ran once, behind its fence, in the second segment
    assert view.pending_effect is None
    assert [e.payload["tool"] for e in tools] == ["lookup_order"] * 4 + ["issue_refund"]


async def test_an_approval_in_a_later_segment(long_runs: Serving, client: Client) -> None:
    """The write of round 5 waits for approval in the third segment (rounds 5 and on)."""
    async with long_runs(2) as long:
        runtime = long.runtime
        waiting = await runtime.run("support", "long write", max_iterations=10)
        assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
        assert len(await segments(client, waiting.run_id)) == 3
        await decide(runtime, waiting, approved=True)
        view = await runtime.result(waiting.run_id)
        ledger = DemoWorld(long.parts.ctx).ledger_count(run_id=view.run_id)
        events = await runtime.events(view.run_id)
    assert view.status is RunStatus.COMPLETED and view.answer == "Refunded after a long look."
    assert ledger == 1
    assert [e.sequence for e in events] == list(range(len(events)))
    kinds = [e.kind for e in events]
    assert kinds.count(EventKind.APPROVAL_REQUESTED) == kinds.count(EventKind.APPROVAL) == 1


async def test_cancel_in_the_second_segment(long_runs: Serving, client: Client) -> None:
    async with long_runs(3) as long:
        runtime = long.runtime
        run_id = await runtime.start("auto", "loop forever", max_iterations=60)

        async def continued() -> bool:
            return len(await segments(client, run_id)) >= 2

        await until(continued, "the run continued as new", within=60)
        await runtime.cancel(run_id, by="alice", reason="enough")
        view = await until_status(runtime, run_id, RunStatus.CANCELLED, RunStatus.COMPLETED)
        events = await runtime.events(run_id)
        with pytest.raises(WorkflowFailureError):  # the workflow closes Canceled
            await client.get_workflow_handle(run_id).result()
    assert view.status is RunStatus.CANCELLED
    assert 3 <= view.iterations < 60  # the cancel may meet the second segment's start
    # In commit order, each sequence once and rising. Whole, but for one sequence when the
    # cancel cut a call in flight (a loaded machine's cancel lands mid-round): that call
    # had reserved the sequence just before the cancel's, and its result never arrived.
    seqs = [e.sequence for e in events]
    assert seqs == sorted(set(seqs))
    assert events[-1].kind is EventKind.CANCEL and events[-1].payload.get("by") == "alice"
    assert set(range(seqs[-1])) - set(seqs) <= {seqs[-1] - 1}
    last = (await segments(client, run_id))[-1][-1].event_type
    assert last == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED


async def test_the_default_ceiling_still_refuses_21(runtime: AgentRuntime) -> None:
    with pytest.raises(InvalidRequestError, match="AGENTRT_MAX_ITERATIONS_CEILING"):
        await runtime.run("auto", "loop forever", max_iterations=21)


async def test_a_client_over_the_workers_ceiling_is_refused_by_the_worker(
    client: Client, worker: object, runs: RunStore, task_queue: str
) -> None:
    """A client whose ceiling is above the worker's: the worker's begin refuses, typed."""
    above = AgentRuntime(client, runs, task_queue, max_iterations_ceiling=CEILING)
    with pytest.raises(InvalidRequestError, match="AGENTRT_MAX_ITERATIONS_CEILING"):
        await above.run("auto", "loop forever", max_iterations=21)


def test_a_worker_refuses_a_profile_over_its_ceiling(settings: Settings) -> None:
    greedy = Profile(name="greedy", model="scripted:demo", max_iterations=21)
    with pytest.raises(ConfigError, match="AGENTRT_MAX_ITERATIONS_CEILING"):
        build(settings, profiles=[greedy])
    raised = settings.replace(limits={"max_iterations_ceiling": 21})
    build(raised, profiles=[greedy]).close()


async def test_every_segment_replays_and_can_be_recorded(
    long_runs: Serving, client: Client
) -> None:
    """Each segment of a run that continued as new replays on today's code (the first
    ends in the continue-as-new command, the next ones start from a carry). Recorded as
    `next-long_run_segment<N>.json` with AGENTRT_RECORD_HISTORIES set (tests/histories)."""
    async with long_runs(3) as long:
        view = await long.runtime.run("auto", "loop forever", max_iterations=7)
    assert view.status is RunStatus.COMPLETED and view.iterations == 7
    parts = await segments(client, view.run_id)
    assert len(parts) == 3  # rounds 1-3, 4-6, then 7 and the answer
    record = bool(os.environ.get("AGENTRT_RECORD_HISTORIES"))
    for n, events in enumerate(parts, start=1):
        history = WorkflowHistory(view.run_id, events)
        result = await replayer().replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, (n, result.replay_failure)
        path = HISTORIES / f"next-long_run_segment{n}.json"
        if record and not path.exists():
            data = {"workflow_id": view.run_id, "history": json.loads(history.to_json())}
            path.write_text(json.dumps(data, indent=1))
    assert [patches(events) for events in parts] == [[], [], []]  # none in any segment
