"""Issue 41, L5: a provider's own text never reaches `run_failed.error` or the WARNING log.

A hostile (or compromised) endpoint controls every header and field of its reply: a
request id, Gemini's block reason, the keys of a malformed reply. Before, the request id
(filtered to `[A-Za-z0-9_.:-]`, which still spells a key or a prompt word) and the block
reason reached the failure's message, the `run_failed` event at privacy `none` and the
WARNING line. Now a failure says only the fixed vocabulary of contracts/provider_errors.py,
and what is kept or logged of it is checked against that vocabulary at the sink."""

import logging
import warnings
from collections.abc import Iterator

import pytest
from google.genai import types
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities._common import expected_failure
from agentrt.activities.providers._native import Names
from agentrt.activities.providers.gemini import GeminiProvider, parse_reply
from agentrt.activities.providers.openai_compat import OpenAICompatProvider
from agentrt.activities.settle import Settle
from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import Message, ProviderRequest, Usage
from agentrt.contracts.provider_errors import WITHHELD, known_detail
from agentrt.contracts.run import SettleRequest
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests.activities.test_openai_provider import Canned, FakeServer, simple_request
from tests.activities.test_openai_provider import server as server

CANARY = "sk-canary-0a1b2c3d4e5f6a7b8c9d"  # what a hostile provider echoes: a key
LEVELS = ["full", "redacted", "metadata", "none"]


@pytest.fixture
def fake(server: FakeServer) -> Iterator[FakeServer]:
    server.replies.clear()
    server.seen.clear()
    yield server


@pytest.mark.parametrize("status", [400, 429, 503])
async def test_a_request_id_header_is_not_in_the_failure(fake: FakeServer, status: int) -> None:
    body = {"error": {"message": CANARY, "code": "invalid_request"}}
    fake.replies.append(Canned(status, body, {"x-request-id": CANARY, "request-id": CANARY}))
    provider = OpenAICompatProvider(api_key="k", base_url=fake.base_url, timeout=5)
    try:
        with pytest.raises(ApplicationError) as caught:
            await provider.complete(simple_request())
    finally:
        await provider.aclose()
    message = caught.value.message
    assert CANARY not in message and "canary" not in message, message
    assert message.startswith(f"HTTP {status} from provider openai (")
    assert known_detail(message) == message  # one of the known shapes


def _blocked(reason: str) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        prompt_feedback=types.GenerateContentResponsePromptFeedback(block_reason=reason)
    )


async def test_a_gemini_block_reason_of_the_providers_own_is_unknown_and_not_warned() -> None:
    request = ProviderRequest(model="m", messages=[Message(role="user", content="hi")])
    with warnings.catch_warnings(record=True) as seen:
        await GeminiProvider(api_key="k", base_url="http://127.0.0.1:9").aclose()  # as built
        with pytest.raises(ApplicationError) as caught:
            parse_reply(_blocked(CANARY), Names(request), "gemini")
        with pytest.raises(ApplicationError) as known:
            parse_reply(_blocked("SAFETY"), Names(request), "gemini")
    assert caught.value.message == "provider gemini refused the request (prompt blocked: UNKNOWN)"
    assert known.value.message == "provider gemini refused the request (prompt blocked: SAFETY)"
    # The SDK warns with the unknown value (on stderr): that warning is silenced.
    assert not [w for w in seen if CANARY in str(w.message)]


@pytest.mark.parametrize(
    "detail",
    [
        f"HTTP 400 from provider openai (bad request); request id {CANARY}",
        f"HTTP 400 from provider openai (bad request) [{CANARY}]",
        f"HTTP 400 from provider openai ({CANARY})",
        f"provider gemini refused the request (prompt blocked: {CANARY})",
        f"openai sent a malformed reply: invalid {CANARY}",
        f"a plug-in provider's own words: {CANARY}",
    ],
)
def test_an_unknown_shape_is_withheld(detail: str) -> None:
    assert known_detail(detail) == WITHHELD


@pytest.mark.parametrize("privacy", LEVELS)
def test_run_failed_error_keeps_only_a_known_shape_at_every_privacy_level(
    parts: WorkerResources, privacy: str
) -> None:
    runs = RunStore(parts.ctx)
    for detail, shown in [
        (f"HTTP 503 from provider openai (server error); request id {CANARY}", WITHHELD),
        ("HTTP 429 from provider openai (rate limited) [rate_limit_exceeded]",
         "HTTP 429 from provider openai (rate limited) [rate_limit_exceeded]"),
    ]:  # fmt: skip
        run_id = begin_run(parts.ctx, privacy=privacy)
        Settle(parts.ctx).settle(SettleRequest(
            run_id=run_id, sequence=1, reason=TerminationReason.PROVIDER_FAILED,
            status=RunStatus.FAILED, outcome=Outcome.FAILED, iterations=1, usage=Usage(),
            error_type=ErrorType.PROVIDER_UNAVAILABLE.value, privacy=privacy,
            error_detail=detail, budget=None,
        ))  # fmt: skip
        (failed,) = [e for e in runs.events(run_id) if e.kind is EventKind.RUN_FAILED]
        assert failed.payload["error"] == shown, failed.payload


def test_the_warning_line_of_a_provider_failure_says_only_a_known_shape(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    for kind in (ErrorType.PROVIDER_REJECTED, ErrorType.PROVIDER_UNAVAILABLE):
        exc = ApplicationError(f"HTTP 400 from provider p (bad request) {CANARY}", type=kind.value)
        # In an activity, as it always runs: a retried kind's line names its attempt.
        ActivityEnvironment().run(expected_failure, exc, "run r round 1: p:m")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert CANARY not in logged
    assert WITHHELD in logged  # the rejection's one line, with its text withheld
