"""The completion transaction against the real store: the answer, totals and status
together under the ceiling, refused without its answer, and terminal is terminal."""

import pytest
from temporalio.exceptions import ApplicationError

from agentrt.activities.settle.completion import AnswerMissingError, Completion
from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Message, Usage
from agentrt.contracts.run import CompleteRequest, TurnRecord
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._settle import settle_failed
from tests.store.test_store import _answer, _begin


def _complete(parts: WorkerResources, run_id: str, seq: int = 2, answer_seq: int = 1) -> bool:
    request = CompleteRequest(
        run_id=run_id,
        sequence=seq,
        answer_sequence=answer_seq,
        iterations=1,
        truncated=False,
        termination_reason=TerminationReason.ANSWERED,
        usage=Usage(prompt_tokens=3, completion_tokens=4),
        privacy="full",
    )
    return Completion(parts.ctx).complete(request).applied


def _fail(parts: WorkerResources, run_id: str, seq: int = 9) -> bool:
    settled = settle_failed(
        parts.ctx, run_id, sequence=seq, reason=TerminationReason.INTERNAL_ERROR, error_type="X"
    )
    return settled.applied


def test_completion_writes_answer_totals_and_status_together(parts: WorkerResources) -> None:
    run_id = _begin(parts)
    _answer(parts, run_id)
    assert _complete(parts, run_id)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.status is RunStatus.COMPLETED
    assert view.answer == "the answer" and view.prompt_tokens == 3 and view.revision == 1
    # terminal is terminal: neither a second completion nor a failure changes it
    assert not _complete(parts, run_id, seq=3)
    assert not _fail(parts, run_id)
    assert RunStore(parts.ctx).get(run_id).revision == 1  # type: ignore[union-attr]


def test_completion_without_its_answer_is_refused_and_changes_nothing(
    parts: WorkerResources,
) -> None:
    run_id = _begin(parts)
    with pytest.raises(AnswerMissingError):
        _complete(parts, run_id)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.status is RunStatus.RUNNING and view.answer is None


def test_a_failed_run_cannot_be_completed(parts: WorkerResources) -> None:
    run_id = _begin(parts)
    _answer(parts, run_id)
    assert _fail(parts, run_id)
    assert not _complete(parts, run_id)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.status is RunStatus.FAILED and view.answer is None


def test_the_stored_answer_follows_the_ceiling(parts: WorkerResources) -> None:
    runs = RunStore(parts.ctx)
    redacted = _begin(parts)
    runs.record_turn(
        redacted,
        TurnRecord(1, 1, Message(role="assistant", content="mail a@b.io"), {}, 1.0, "full"),
    )
    assert runs.tighten_ceiling(redacted, "redacted") == "redacted"
    assert runs.tighten_ceiling(redacted, "full") == "redacted"  # never loosened
    assert _complete(parts, redacted)
    assert RunStore(parts.ctx).get(redacted).answer == "mail ***"  # type: ignore[union-attr]
    withheld = _begin(parts)
    _answer(parts, withheld)
    runs.tighten_ceiling(withheld, "none")
    with pytest.raises(ApplicationError) as refused:  # the store's ResultNotRetainableError
        _complete(parts, withheld)
    assert refused.value.type == ErrorType.RESULT_NOT_RETAINABLE.value
    view = RunStore(parts.ctx).get(withheld)
    assert view is not None and view.status is RunStatus.RUNNING and view.answer is None
