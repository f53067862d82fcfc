"""A remote agent's question to the operator (a fenced write's `input-required`) is content:
the INPUT_REQUESTED event keeps it at privacy full, redacts it at redacted, and keeps only
its size below, as every other text of the run (store/steps/privacy.py CONTENT_KEYS)."""

import pytest

from agentrt.activities.pauses import await_input
from agentrt.contracts.enums import EventKind
from agentrt.contracts.pauses import AwaitInputRequest
from agentrt.contracts.redaction import redact_tree
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run

QUESTION = "Should the refund go to alice@example.com or to the card on file?"


@pytest.mark.parametrize("privacy", ["full", "redacted", "metadata", "none"])
def test_a_writes_question_is_kept_at_the_runs_privacy_level(
    parts: WorkerResources, privacy: str
) -> None:
    run_id = begin_run(parts.ctx, privacy=privacy)
    request = AwaitInputRequest(
        run_id=run_id, sequence=2, round=1, privacy=privacy,  # type: ignore[arg-type]
        question=QUESTION, call_id="c-1", tool="partner.quoter",
    )  # fmt: skip
    assert await_input(parts.ctx, request).applied
    (asked,) = [e for e in RunStore(parts.ctx).events(run_id)
                if e.kind is EventKind.INPUT_REQUESTED]  # fmt: skip
    assert asked.payload["call_id"] == "c-1" and asked.payload["tool"] == "partner.quoter"
    if privacy == "full":
        assert asked.payload["question"] == QUESTION
    elif privacy == "redacted":  # as any content at redacted: the question, redacted
        assert asked.payload["question"] == redact_tree(QUESTION) != QUESTION
    else:
        assert "question" not in asked.payload and "alice" not in str(asked.payload)
        assert asked.payload["question_size"] == len(QUESTION)
