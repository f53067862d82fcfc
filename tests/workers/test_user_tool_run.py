"""End to end on the Temporal dev server: a user's `@tool` write, loaded from
AGENTRT_TOOLBOXES by the worker builder, waits for approval, passes the fence and runs once."""

import textwrap
import uuid
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from agentrt import AgentRuntime, RunStatus, Settings, ToolEffect, build_worker
from agentrt.contracts.enums import EventKind
from agentrt.contracts.ids import ACT_WRITE_EXECUTE, idempotency_key
from agentrt.contracts.views import RunView
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import TOOL_THREAD_PREFIX
from tests.fence._history import stamp_markers
from tests.workers import _user_toolbox
from tests.workflows._waiting import decide

PROFILES = """
profiles:
  - name: bookkeeper
    instructions: You keep the books.
    model: scripted:demo
    toolboxes: [ledger]
    tools: [lookup_order]
    approval: writes
"""
RULES = """
default_reply: I only book entries.
rules:
  - name: book
    match: {contains: book}
    steps:
      - tool_calls:
          - name: book_entry
            arguments: {account: acme, amount_cents: 1250, memo: invoice 7}
      - text: Booked.
"""


def bookkeeper_settings(settings: Settings, tmp_path: Path, **worker: Any) -> Settings:
    """The suite's settings serving the bookkeeper (PROFILES, RULES) on a queue of its own;
    `worker` changes fields of the worker group."""
    (tmp_path / "profiles.yaml").write_text(textwrap.dedent(PROFILES))
    (tmp_path / "rules.yaml").write_text(textwrap.dedent(RULES))
    return settings.replace(
        temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
        worker={"profiles_file": tmp_path / "profiles.yaml", **worker},
        providers={"rules_file": tmp_path / "rules.yaml"},
    )


async def booking_waits(runtime: AgentRuntime) -> RunView:
    """The bookkeeper's run, stopped at its approval: the one call it waits on books."""
    waiting = await runtime.run("bookkeeper", "Please book the invoice", initiator="al")
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    pending = waiting.pending_approval
    assert pending is not None and [c.name for c in pending.calls] == ["book_entry"]
    return waiting


async def booked_once(runtime: AgentRuntime, waiting: RunView) -> dict[str, Any]:
    """Approve the booking: the run completes, and the entry was booked once, by its key."""
    await decide(runtime, waiting, approved=True, by="bo")
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED and done.answer == "Booked."
    [booked] = [b for b in _user_toolbox.BOOKED if b["run_id"] == waiting.run_id]
    assert booked["key"] == idempotency_key(waiting.run_id, booked["call_id"])
    return booked


async def test_a_user_tool_write_is_approved_fenced_and_runs_once(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    s = bookkeeper_settings(settings, tmp_path, toolboxes="tests.workers._user_toolbox:toolbox")
    queue = s.temporal.task_queue
    worker, resources = build_worker(client, s)
    with resources:
        async with worker:
            runtime = AgentRuntime(client, RunStore(resources.ctx), queue)
            waiting = await booking_waits(runtime)
            run_id = waiting.run_id
            assert [b for b in _user_toolbox.BOOKED if b["run_id"] == run_id] == []

            booked = await booked_once(runtime, waiting)
            assert (booked["account"], booked["amount_cents"]) == ("acme", 1250)
            assert booked["thread"].startswith(TOOL_THREAD_PREFIX)  # the worker's pool

            events = await runtime.events(run_id)
            [step] = [e for e in events if e.kind is EventKind.TOOL]
            assert step.payload["effect"] == ToolEffect.NON_IDEMPOTENT_WRITE.value
            assert not step.payload["is_error"]
            assert (
                '"entry"' in step.payload["result"]
                and '"memo": "invoice 7"' in (step.payload["result"])
            )
            kinds = [e.kind for e in events]
            assert kinds.index(EventKind.APPROVAL) < kinds.index(EventKind.TOOL)

            history = await client.get_workflow_handle(run_id).fetch_history()
            writes = [
                e
                for e in history.events
                if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                and e.activity_task_scheduled_event_attributes.activity_type.name
                == ACT_WRITE_EXECUTE
            ]
            # The stamp is a local activity: its marker comes before the write it fences.
            stamps = stamp_markers(list(history.events))
            assert len(stamps) == 1
            assert len(writes) == 1
            assert stamps[0].event_id < writes[0].event_id
    assert resources.executor is not None and resources.executor._shutdown  # type: ignore[attr-defined]
