"""Reads' steps that ride with a model turn (issue 45, store/steps/deferred.py): the turn and
the reads before it written as ONE statement in autocommit, the reads in the transcript the
model call reads before they are stored, and a retried write adding nothing."""

from typing import Any

from sqlalchemy import func, select

from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import Message, ToolCall
from agentrt.contracts.run import TurnRecord
from agentrt.store.db.tables import EventRow, MessageRow
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStep, ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests._snapshots import recorded
from tests.store.test_step_rows import _statements


def _read(parts: WorkerResources, run_id: str, sequence: int) -> DeferredStep:
    call = ToolCall(call_id=f"r1.{sequence}", name="lookup_order", arguments={"order_id": "7"})
    step = ToolStep(run_id=run_id, sequence=sequence, round=1, call=call, effect="READ_ONLY",
                    content=f"result {sequence}", is_error=False, privacy="full")  # fmt: skip
    return ToolStepStore(parts.ctx).deferred(step)


def _turn(sequence: int, pending: tuple[DeferredStep, ...]) -> TurnRecord:
    message = Message(role="assistant", content="next")
    return TurnRecord(sequence, 2, message, {"content": "next"}, 1.0, "full", pending=pending)


def _count(parts: WorkerResources, table: Any, run_id: str) -> int:
    with parts.ctx.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(table).where(table.run_id == run_id)))


def test_a_turn_and_its_reads_are_one_statement_and_land_once(parts: WorkerResources) -> None:
    run_id = begin_run(parts.ctx, snapshot=recorded("full"))
    runs = RunStore(parts.ctx)
    # Out of order on purpose: the store writes them in sequence order.
    pending = (_read(parts, run_id, 3), _read(parts, run_id, 2))
    _, transcript, recorded_turn = runs.turn_inputs(run_id, 4, pending)
    assert recorded_turn is None
    assert [m.content for m in transcript if m.role == "tool"] == ["result 2", "result 3"]
    with _statements(parts) as sent:
        runs.record_turn(run_id, _turn(4, pending))
    assert sent in (["SELECT"], ["WITH"], ["INSERT"]), sent  # one statement, no BEGIN/COMMIT
    runs.record_turn(run_id, _turn(4, pending))  # a retried call: nothing twice
    assert _count(parts, MessageRow, run_id) == 4 and _count(parts, EventRow, run_id) == 4
    events = runs.events(run_id)
    assert [e.sequence for e in events] == [0, 2, 3, 4]  # committed in sequence order
    assert [e.kind for e in events][1:] == [EventKind.TOOL, EventKind.TOOL, EventKind.LLM]
    # Once stored, the transcript is the same, and a retry sees its turn recorded.
    _, again, turn = runs.turn_inputs(run_id, 4, pending)
    assert again == transcript and turn is not None and turn.content == "next"


def test_reads_recorded_alone_land_once(parts: WorkerResources) -> None:
    run_id = begin_run(parts.ctx, snapshot=recorded("full"))
    steps = ToolStepStore(parts.ctx)
    pending = [_read(parts, run_id, 2), _read(parts, run_id, 1)]
    steps.record_deferred(run_id, pending)
    steps.record_deferred(run_id, pending)
    assert [e.sequence for e in RunStore(parts.ctx).events(run_id)] == [0, 1, 2]
