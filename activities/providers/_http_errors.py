"""HTTP failures of a model provider → ApplicationError for Temporal.

The provider never retries: it classifies, and Temporal's retry policy decides. Messages
carry the status, the provider's short error code, an excerpt of its own reason (bounded,
redacted: no keys, tokens, e-mail addresses or long numbers, and no text the request
sent, which a provider may echo) and its request id; never the API key or the request.
"""

import json
import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import httpx
from temporalio.exceptions import ApplicationError

from agentrt.contracts.errors import ErrorType
from agentrt.contracts.redaction import redact_text

# Statuses a later attempt can succeed on: timeout, conflict, rate limit, server trouble.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# A server asking for hours would park the activity past any sane run timeout; waiting
# at most this long and being told again costs one request.
MAX_RETRY_DELAY = timedelta(minutes=5)
_SAFE_TOKEN = re.compile(r"[^A-Za-z0-9_.:\-]")
# Enough for "Invalid model name passed in model=..." and the proxy's hint after it.
MAX_REASON_CHARS = 300
_LONG_NUMBER = re.compile(r"\d[\d \-]{6,}\d")  # card, account and phone numbers
_MIN_ECHO = 8  # shorter request texts are too common to mask usefully


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after(headers: httpx.Headers, *, now: datetime | None = None) -> timedelta | None:
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


def _token(value: object, limit: int = 64) -> str:
    """A short identifier safe to put in a message (error codes, request ids)."""
    return _SAFE_TOKEN.sub("", str(value))[:limit]


def _error_code(response: httpx.Response) -> str:
    """The provider's machine-readable error code or type, if its body has one."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    code = error.get("code") or error.get("type")
    return _token(code) if isinstance(code, str | int) else ""


def _reason_text(response: httpx.Response) -> str:
    """The provider's own reason: error.message of an OpenAI-style body, else the text."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return response.text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return str(body["detail"])
    return ""


def reason_excerpt(response: httpx.Response, sent: Iterable[str] = ()) -> str:
    """A bounded, redacted, one-line excerpt of the provider's reason for a rejection."""
    text = _reason_text(response)
    for part in sent:
        if len(part) >= _MIN_ECHO:
            text = text.replace(part, "[request text]")
    text = _LONG_NUMBER.sub("[number]", redact_text(text, max_chars=None))
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def status_error(
    response: httpx.Response, provider: str, sent: Iterable[str] = ()
) -> ApplicationError:
    """A non-2xx answer: retryable (with the server's delay) or a deterministic rejection.
    `sent`: the texts of the request (and the key), masked should the reason echo them."""
    detail = f"{provider} answered HTTP {response.status_code}"
    if code := _error_code(response):
        detail += f" ({code})"
    if reason := reason_excerpt(response, sent):
        detail += f": {reason}"
    if request_id := response.headers.get("x-request-id"):
        detail += f"; request id {_token(request_id, 128)}"
    if is_retryable_status(response.status_code):
        return ApplicationError(
            detail,
            type=ErrorType.PROVIDER_UNAVAILABLE.value,
            next_retry_delay=retry_after(response.headers),
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
