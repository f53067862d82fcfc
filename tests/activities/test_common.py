"""How a failure leaves an activity (`expected_failure`): the retry policies list no error
types, so a deterministic type must leave non-retryable whoever raised it."""

import asyncio
import dataclasses
import logging
import time
from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.testing import ActivityEnvironment

from agentrt.activities._common import expected_failure
from agentrt.activities._heartbeats import heartbeating
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


async def test_a_provider_away_leaves_benign_and_retryable_in_one_line_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 529 the policy retries: the SDK would log each attempt with a traceback; here it is
    one line naming the attempt, and BENIGN (no traceback), still retryable."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info, attempt=2, retry_policy=RetryPolicy(maximum_attempts=5)
    )
    raised = ApplicationError(
        "HTTP 529 from provider p (overloaded)", type=ErrorType.PROVIDER_UNAVAILABLE.value
    )

    @activity.defn(name="probe")
    async def probe() -> BaseException:
        return expected_failure(raised, "run r round 1: p:m")

    with caplog.at_level(logging.WARNING):
        out = await env.run(probe)
    assert isinstance(out, ApplicationError) and out is not raised
    assert out.category is ApplicationErrorCategory.BENIGN and not out.non_retryable
    assert (out.type, out.message) == (raised.type, raised.message)
    [line] = caplog.records
    assert line.getMessage().startswith(
        "run r round 1: p:m: HTTP 529 from provider p (overloaded) (ProviderUnavailable); "
        "attempt 2 of 5, retried"
    )
    assert not line.exc_info


@pytest.mark.parametrize(
    "raised",
    [
        ApplicationError("away", type=ErrorType.STORE_UNAVAILABLE.value),
        ApplicationError("untyped"),
        RuntimeError("not an ApplicationError"),
    ],
)
async def test_other_failures_leave_as_they_are_and_stay_retryable(raised: Exception) -> None:
    out = await _leaving(raised)
    assert out is raised
    assert not getattr(out, "non_retryable", False)


async def test_heartbeating_beats_after_a_third_of_the_timeout_then_every_interval() -> None:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=0.6))
    beats: list[float] = []
    env.on_heartbeat = lambda *_: beats.append(time.monotonic())

    @activity.defn(name="slow")
    async def slow() -> None:
        async with heartbeating(every=0.4):
            await asyncio.sleep(0.8)

    started = time.monotonic()
    await env.run(slow)
    # First beat at 0.2 s (a third of the timeout), then every 0.4 s: 0.2 and 0.6 s.
    assert len(beats) == 2
    assert 0.15 <= beats[0] - started < 0.4
    await asyncio.sleep(0.5)
    assert len(beats) == 2  # the timer went with the activity


async def test_a_short_activity_sends_no_heartbeat() -> None:
    env = ActivityEnvironment()
    beats: list[object] = []
    env.on_heartbeat = lambda *d: beats.append(d)

    @activity.defn(name="quick")
    async def quick() -> None:
        async with heartbeating(every=0.2):
            await asyncio.sleep(0.01)

    await env.run(quick)
    await asyncio.sleep(0.3)
    assert beats == []
