"""The answer's turn recorded in the completion's own transaction (Completion.complete with
`turn`): one commit for both, both or neither on a failed completion, and the turn kept
when the run had already ended."""

from dataclasses import replace

import pytest

from agentrt.activities.completion import Completion
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.messages import Message, Usage
from agentrt.contracts.run import CompleteRequest, TurnRecord
from agentrt.store.runs import RunStore
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


def test_a_failed_completion_takes_the_turn_with_it(parts: WorkerResources) -> None:
    def fail_before_commit(point: str) -> None:
        if point == "complete.before_commit":
            raise RuntimeError("injected")

    run_id = _run(parts)
    store = Completion(replace(parts.ctx, faults=fail_before_commit))
    with pytest.raises(RuntimeError):
        _complete(store, run_id)
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
