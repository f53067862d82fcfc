"""How a failure leaves an activity (`expected_failure`): the retry policies list no error
types, so a deterministic type must leave non-retryable whoever raised it."""

import pytest
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.testing import ActivityEnvironment

from agentrt.activities._common import expected_failure
from agentrt.contracts.errors import NON_RETRYABLE, ErrorType


async def _leaving(exc: BaseException) -> BaseException:
    @activity.defn(name="probe")
    async def probe() -> BaseException:
        return expected_failure(exc, "probe")

    return await ActivityEnvironment().run(probe)


@pytest.mark.parametrize("kind", [e.value for e in NON_RETRYABLE])
async def test_a_deterministic_type_leaves_non_retryable_even_without_the_flag(kind: str) -> None:
    raised = ApplicationError("a plug-in's failure", "detail", type=kind)  # no non_retryable
    out = await _leaving(raised)
    assert isinstance(out, ApplicationError)
    assert out.non_retryable
    assert (out.type, out.message, out.details) == (kind, "a plug-in's failure", ("detail",))


async def test_a_provider_rejection_leaves_benign_and_non_retryable() -> None:
    raised = ApplicationError("400", type=ErrorType.PROVIDER_REJECTED.value, non_retryable=True)
    out = await _leaving(raised)
    assert isinstance(out, ApplicationError)
    assert out.category is ApplicationErrorCategory.BENIGN and out.non_retryable


@pytest.mark.parametrize(
    "raised",
    [
        ApplicationError("503", type=ErrorType.PROVIDER_UNAVAILABLE.value),
        ApplicationError("away", type=ErrorType.STORE_UNAVAILABLE.value),
        ApplicationError("untyped"),
        RuntimeError("not an ApplicationError"),
    ],
)
async def test_other_failures_leave_as_they_are_and_stay_retryable(raised: Exception) -> None:
    out = await _leaving(raised)
    assert out is raised
    assert not getattr(out, "non_retryable", False)
