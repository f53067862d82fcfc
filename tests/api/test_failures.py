"""Every way a run can end, and every typed failure code it may carry, has words for the
operator: what happened and what to do (api/operator/failures.py, shown by the run page)."""

from agentrt.api.operator.failures import CODES, REASONS, failure
from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType


def test_every_termination_reason_has_a_sentence_and_an_action() -> None:
    assert set(REASONS) == set(TerminationReason)
    for reason, (summary, action) in REASONS.items():
        assert summary.endswith(".") and len(summary) > 10, reason
        assert action.endswith(".") and len(action) > 10, reason


def test_every_failure_code_has_a_sentence() -> None:
    assert set(CODES) == set(ErrorType)
    assert all(text.endswith(".") for text in CODES.values())


def test_a_failed_run_is_explained_and_a_running_one_is_not() -> None:
    out = failure(RunStatus.FAILED, TerminationReason.PROVIDER_FAILED, "ProviderUnavailable")
    assert out is not None and out.reason == "provider_failed"
    assert "provider" in out.summary and out.detail == CODES[ErrorType.PROVIDER_UNAVAILABLE]
    assert "start the run again" in out.action
    # A failure code that is no ErrorType (a Python error's name) keeps the reason's words.
    odd = failure(RunStatus.FAILED, TerminationReason.INTERNAL_ERROR, "KeyError")
    assert odd is not None and odd.detail is None and odd.error_type == "KeyError"
    assert failure(RunStatus.RUNNING, None, None) is None
    assert failure(RunStatus.COMPLETED, TerminationReason.ANSWERED, None) is None
    unknown = failure(RunStatus.FAILED, None, None)
    assert unknown is not None and "does not know" in unknown.summary
