"""End to end on a real dev server and a real database."""

from temporalio.worker import Worker

from contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from starter.facade import AgentRuntime
from store.demo import DemoWorld
from workers.compose import Parts


async def test_demo_run_completes_with_events_in_order(
    runtime: AgentRuntime, worker: Worker, parts: Parts
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
