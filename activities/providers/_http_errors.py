"""HTTP failures of a model provider → ApplicationError for Temporal.

The provider never retries: it classifies, and Temporal's retry policy decides. Messages
carry the status, a fixed category and the provider's error code when it is a known one
(contracts/provider_errors.py): never the body of the answer, which may echo the request
or the API key, nor a header (a request id is the provider's text too).
"""

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import httpx
from temporalio.exceptions import ApplicationError

from agentrt.contracts.errors import ErrorType
from agentrt.contracts.provider_errors import KNOWN_CODES, category

# Statuses a later attempt can succeed on: timeout, conflict, rate limit, server trouble.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# A server asking for hours would park the activity past any sane run timeout; waiting
# at most this long and being told again costs one request.
MAX_RETRY_DELAY = timedelta(minutes=5)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> timedelta | None:
    """The server's requested delay: `retry-after-ms`, else `Retry-After` (seconds or date)."""
    seconds: float | None = None
    if (ms := headers.get("retry-after-ms")) is not None:
        seconds = _number(ms)
        seconds = None if seconds is None else seconds / 1000
    if seconds is None and (value := headers.get("retry-after")) is not None:
        seconds = _number(value)
        if seconds is None:
            seconds = _seconds_until(value, now or datetime.now(UTC))
    if seconds is None or seconds <= 0:
        return None
    return min(timedelta(seconds=seconds), MAX_RETRY_DELAY)


def _number(value: str) -> float | None:
    try:
        parsed = float(value.strip())
    except ValueError:
        return None
    return parsed if math.isfinite(parsed) else None


def _seconds_until(value: str, now: datetime) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT by definition
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


def _error_code(content: bytes) -> str:
    """The provider's machine-readable error code, only when it is one of the known
    vocabulary (never free text a provider may have filled with the request)."""
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    for key in ("code", "type", "status"):
        value = error.get(key)
        if isinstance(value, str) and value in KNOWN_CODES:
            return value
    return ""


def status_error(
    response: httpx.Response, provider: str, sent: Iterable[str] = ()
) -> ApplicationError:
    """A non-2xx answer: retryable (with the server's delay) or a deterministic rejection.

    The message is the status, a fixed category and a known error code: never the body,
    whose text may echo the request (the prompt) or part of the API key ("Incorrect API
    key provided: sk-abc…"), nor the request id header. It becomes a Temporal failure message, a
    WARNING log line and the run_failed event's `error`. `sent` is kept for callers; there
    is nothing of the body left to mask it in."""
    del sent
    return classify(response.status_code, response.headers, response.content, provider)


def classify(
    status: int, headers: Mapping[str, str], content: bytes, provider: str
) -> ApplicationError:
    """status_error's work, from the parts of an answer any HTTP client (or an SDK's
    exception) has: the status, the headers and the raw body (read for its error code only)."""
    detail = f"HTTP {status} from provider {provider} ({category(status)})"
    if code := _error_code(content):
        detail += f" [{code}]"
    if is_retryable_status(status):
        return ApplicationError(
            detail,
            type=ErrorType.PROVIDER_UNAVAILABLE.value,
            next_retry_delay=retry_after(headers),
        )
    return ApplicationError(detail, type=ErrorType.PROVIDER_REJECTED.value, non_retryable=True)


def transport_error(exc: httpx.RequestError, provider: str) -> ApplicationError:
    """No usable answer (refused, reset, timed out): retryable. Only the class name is kept,
    since httpx messages can quote the URL and future versions might quote more."""
    if isinstance(exc, httpx.UnsupportedProtocol):  # a base URL without http(s)://
        return ApplicationError(
            f"{provider} base URL is not http(s)",
            type=ErrorType.PROVIDER_REJECTED.value,
            non_retryable=True,
        )
    return ApplicationError(
        f"{provider} unreachable: {type(exc).__name__}",
        type=ErrorType.PROVIDER_UNAVAILABLE.value,
    )


def malformed_reply(provider: str, what: str) -> ApplicationError:
    """A 2xx whose body is not a chat completion: retryable, as a cut or garbled body from a
    proxy is the usual cause; the retry policy's attempt limit bounds a persistent one."""
    return ApplicationError(
        f"{provider} sent a malformed reply: {what}",
        type=ErrorType.PROVIDER_UNAVAILABLE.value,
    )
