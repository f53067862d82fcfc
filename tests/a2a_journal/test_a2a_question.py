"""A run served over A2A that waits for a write's question (a remote agent's
`input-required`, issue 43) shows the task that question, not the model's last words; at a
privacy level that kept no text of it, only that input is needed."""

import pytest

from agentrt.activities.a2a import NEEDS_INPUT_NOTE, project
from agentrt.activities.pauses import await_input
from agentrt.contracts.a2a import ProjectRequest
from agentrt.contracts.messages import Message
from agentrt.contracts.pauses import AwaitInputRequest
from agentrt.contracts.run import TurnRecord
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.a2a_journal.test_a2a_store import _task

QUESTION = "Which currency, EUR or USD?"


@pytest.mark.parametrize(
    ("privacy", "shown"),
    [("full", QUESTION), ("redacted", QUESTION), ("metadata", NEEDS_INPUT_NOTE)],
)
def test_a_task_waiting_for_a_writes_answer_shows_the_writes_question(
    parts: WorkerResources, privacy: str, shown: str
) -> None:
    task_id, run_id = _task(parts)
    turn = Message(role="assistant", content="Let me ask the partner.")
    RunStore(parts.ctx).record_turn(run_id, TurnRecord(1, 1, turn, {}, 1.0, "full"))
    asked = AwaitInputRequest(
        run_id=run_id, privacy=privacy, sequence=2, round=1,
        question=QUESTION, call_id="c1", tool="partner.quoter",
    )  # fmt: skip
    assert await_input(parts.ctx, asked).applied
    project(parts.ctx, ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full"))
    task = A2AStore(parts.ctx).get(task_id, "alice")
    assert task is not None and task.state == "TASK_STATE_INPUT_REQUIRED"
    assert task.status_message is not None
    assert task.status_message["parts"][0]["text"] == shown


def test_a_task_waiting_for_the_models_question_still_shows_the_model(
    parts: WorkerResources,
) -> None:
    task_id, run_id = _task(parts)
    turn = Message(role="assistant", content="Which order do you mean?")
    RunStore(parts.ctx).record_turn(run_id, TurnRecord(1, 1, turn, {}, 1.0, "full"))
    asked = AwaitInputRequest(run_id=run_id, privacy="full", sequence=2, round=1)
    assert await_input(parts.ctx, asked).applied
    project(parts.ctx, ProjectRequest(run_id=run_id, task_id=task_id, answer_level="full"))
    task = A2AStore(parts.ctx).get(task_id, "alice")
    assert task is not None and task.status_message is not None
    assert task.status_message["parts"][0]["text"] == "Which order do you mean?"
