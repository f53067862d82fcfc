"""The answer's turn recorded in the completion's own transaction (Completion.complete with
`turn`): one commit for both, both or neither on a failed completion, and the turn kept
when the run had already ended."""

from dataclasses import replace

import pytest

from agentrt.activities.settle.completion import Completion
from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.messages import Message, ToolCall, Usage
from agentrt.contracts.run import CompleteRequest, TurnRecord
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStep, ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.store.test_step_rows import _run, _statements

TURN = TurnRecord(
    sequence=1,
    round=1,
    message=Message(role="assistant", content="the answer"),
    payload={"content": "the answer"},
    duration_ms=1.0,
    privacy="full",
)
# The answer level the model activity read with the turn's inputs (the snapshot's, "full"
# in `_run`): on PostgreSQL the completion is then one statement in autocommit, on SQLite
# two in one transaction.
LEVELLED = replace(TURN, answer_level="full")


def _complete(
    store: Completion, run_id: str, turn: TurnRecord = TURN
) -> tuple[bool, RunStatus | None]:
    request = CompleteRequest(
        run_id=run_id,
        sequence=turn.sequence + 1,
        answer_sequence=turn.sequence,
        iterations=turn.round,
        truncated=False,
        termination_reason=TerminationReason.ANSWERED,
        usage=Usage(prompt_tokens=1, completion_tokens=2),
        privacy="full",
    )
    settled = store.complete(request, turn)
    return settled.applied, settled.status


def test_turn_and_completion_are_one_commit(parts: WorkerResources) -> None:
    run_id = _run(parts)
    with _statements(parts) as sent:
        assert _complete(Completion(parts.ctx), run_id) == (True, RunStatus.COMPLETED)
    assert sent.count("COMMIT") == 1
    runs = RunStore(parts.ctx)
    kinds = [e.kind for e in runs.events(run_id)]
    assert kinds == [EventKind.RUN_STARTED, EventKind.LLM, EventKind.RUN_COMPLETED]
    view = runs.get(run_id)
    assert view is not None and view.answer == "the answer"


@pytest.mark.parametrize("turn", [TURN, LEVELLED], ids=["full way", "one statement"])
def test_a_failed_completion_takes_the_turn_with_it(
    parts: WorkerResources, turn: TurnRecord
) -> None:
    def fail_before_commit(point: str) -> None:
        if point == "complete.before_commit":
            raise RuntimeError("injected")

    run_id = _run(parts)
    store = Completion(replace(parts.ctx, faults=fail_before_commit))
    with pytest.raises(RuntimeError):
        _complete(store, run_id, turn)
    runs = RunStore(parts.ctx)
    assert [e.kind for e in runs.events(run_id)] == [EventKind.RUN_STARTED]
    assert [m.role for m in runs.transcript(run_id)] == ["user"]
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.RUNNING and view.answer is None


def test_a_run_already_ended_keeps_the_turn_and_is_not_completed(parts: WorkerResources) -> None:
    run_id = _run(parts)
    store = Completion(parts.ctx)
    assert _complete(store, run_id) == (True, RunStatus.COMPLETED)
    again = replace(TURN, sequence=3, round=2)
    assert _complete(store, run_id, again) == (False, RunStatus.COMPLETED)
    runs = RunStore(parts.ctx)
    assert [e.sequence for e in runs.events(run_id)] == [0, 1, 2, 3]


def test_an_answer_with_its_level_completes_in_one_statement(parts: WorkerResources) -> None:
    run_id = _run(parts)
    with _statements(parts) as sent:
        assert _complete(Completion(parts.ctx), run_id, LEVELLED) == (True, RunStatus.COMPLETED)
    if parts.ctx.postgres:
        assert sent == ["WITH"]  # the turn, the guarded UPDATE and its event: one round trip
    else:  # the guarded UPDATE, then the turn and the event as one INSERT (the view)
        assert sent == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
    runs = RunStore(parts.ctx)
    kinds = [e.kind for e in runs.events(run_id)]
    assert kinds == [EventKind.RUN_STARTED, EventKind.LLM, EventKind.RUN_COMPLETED]
    assert [e.position for e in runs.events(run_id)] == [0, 1, 2]  # in sequence order
    view = runs.get(run_id)
    assert view is not None and view.answer == "the answer" and view.revision == 1
    assert view.prompt_tokens == 1 and view.completion_tokens == 2
    assert runs.events(run_id)[-1].payload["answer"] == "the answer"


def test_one_statement_changes_nothing_of_a_run_already_ended(parts: WorkerResources) -> None:
    run_id = _run(parts)
    store = Completion(parts.ctx)
    assert _complete(store, run_id, LEVELLED) == (True, RunStatus.COMPLETED)
    again = replace(LEVELLED, sequence=3, round=2)
    assert _complete(store, run_id, again) == (False, RunStatus.COMPLETED)
    runs = RunStore(parts.ctx)
    assert [e.sequence for e in runs.events(run_id)] == [0, 1, 2, 3]  # the turn kept, no event 4
    assert runs.get(run_id).revision == 1  # type: ignore[union-attr]


def test_a_tightened_ceiling_is_not_passed_by_one_statement(parts: WorkerResources) -> None:
    """The level read with the turn says full; a provider tightened the row to redacted
    since: the answer is kept redacted, as the full way keeps it."""
    run_id = _run(parts)
    RunStore(parts.ctx).tighten_ceiling(run_id, "redacted")
    secret = replace(LEVELLED, message=Message(role="assistant", content="mail a@b.io"))
    assert _complete(Completion(parts.ctx), run_id, secret) == (True, RunStatus.COMPLETED)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.answer is not None and "a@b.io" not in view.answer


def test_an_answer_recorded_before_is_the_one_kept(parts: WorkerResources) -> None:
    """The message at the answer's sequence exists already (an earlier attempt's): one
    statement does not complete on the turn's own text; the full way reads the stored one."""
    run_id = _run(parts)
    RunStore(parts.ctx).record_turn(run_id, TURN)
    other = replace(LEVELLED, message=Message(role="assistant", content="another text"))
    assert _complete(Completion(parts.ctx), run_id, other) == (True, RunStatus.COMPLETED)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.answer == "the answer"


@pytest.mark.parametrize("turn", [TURN, LEVELLED], ids=["full way", "one statement"])
def test_the_reads_riding_with_the_answer_land_in_its_commit(
    parts: WorkerResources, turn: TurnRecord
) -> None:
    """The reads before the answer (TurnRecord.pending, workflows/riding.py) are written in
    the completion's one commit, before the answer's turn in the timeline; and with it
    rolled back when it fails."""
    run_id = _run(parts)
    reads = tuple(_read(parts, run_id, seq) for seq in (2, 1))
    answer = replace(turn, sequence=3, pending=reads)
    with _statements(parts) as sent:
        assert _complete(Completion(parts.ctx), run_id, answer) == (True, RunStatus.COMPLETED)
    assert sent.count("COMMIT") <= 1  # one transaction, or one statement in autocommit
    runs = RunStore(parts.ctx)
    events = runs.events(run_id)
    assert [e.sequence for e in events] == [0, 1, 2, 3, 4]
    assert [e.kind for e in events][1:] == [EventKind.TOOL, EventKind.TOOL, EventKind.LLM,
                                            EventKind.RUN_COMPLETED]  # fmt: skip
    assert [m.role for m in runs.transcript(run_id)] == ["user", "tool", "tool", "assistant"]

    def fail_before_commit(point: str) -> None:
        if point == "complete.before_commit":
            raise RuntimeError("injected")

    other = _run(parts)
    failing = Completion(replace(parts.ctx, faults=fail_before_commit))
    riding = replace(turn, sequence=3, pending=tuple(_read(parts, other, s) for s in (1, 2)))
    with pytest.raises(RuntimeError):
        _complete(failing, other, riding)
    assert [e.kind for e in runs.events(other)] == [EventKind.RUN_STARTED]


def _read(parts: WorkerResources, run_id: str, sequence: int) -> DeferredStep:
    call = ToolCall(call_id=f"r1.{sequence}", name="lookup_order", arguments={})
    step = ToolStep(run_id=run_id, sequence=sequence, round=1, call=call, effect="READ_ONLY",
                    content=f"result {sequence}", is_error=False, privacy="full")  # fmt: skip
    return ToolStepStore(parts.ctx).deferred(step)
