"""A start no worker began asks Temporal who polls the queue before it says why. One describe
answered CANCELLED by a loaded dev server (CI, 2026-12-05) made the start fail as if Temporal
were away; it is asked once more, and only a second failure means Temporal is away."""

import uuid
from collections.abc import Awaitable, Callable

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import NoWorkerError, TemporalUnavailableError
from agentrt.starter import _launch
from agentrt.starter._launch import Launcher


def _describe_failing(
    times: int, calls: list[int]
) -> Callable[[Client, str, float], Awaitable[int]]:
    async def recent_pollers(client: Client, queue: str, within: float) -> int:
        calls.append(1)
        if len(calls) <= times:
            raise RPCError("operation was canceled", RPCStatusCode.CANCELLED, b"")
        return 0

    return recent_pollers


@pytest.mark.parametrize(
    ("failures", "expected", "text"),
    [
        # One failed describe is asked again, and the start says no worker polls.
        (1, NoWorkerError, "no worker is polling task queue 'tq-none'"),
        # Two mean Temporal is away.
        (2, TemporalUnavailableError, "lost the connection to Temporal"),
    ],
)
async def test_a_failed_describe_is_asked_once_more(
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
    failures: int,
    expected: type[Exception],
    text: str,
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_launch, "recent_pollers", _describe_failing(failures, calls))
    launcher = Launcher(client, "tq-none", begin_timeout=1.0)
    error = await launcher._not_begun_in_time(str(uuid.uuid4()), "tq-none")
    assert isinstance(error, expected) and len(calls) == 2
    assert text in str(error)
