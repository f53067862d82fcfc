"""What a model provider's failure may say: a fixed vocabulary, and the check that a
message is made of it.

A provider's reply is the provider's text: its error body, a header such as the request
id, a block reason, a field name in a malformed reply can echo the prompt, part of the
API key, or anything a hostile endpoint likes. Our providers build their failure messages
from the names below only (activities/providers/), and where such a message is kept or
logged (the `run_failed` event's `error`, the worker's WARNING line) it goes through
`known_detail`: a message that is not one of these shapes, whoever raised it (a plug-in
provider, a future bug), is replaced by WITHHELD, at every privacy level."""

from agentrt.contracts.linear import linear

WITHHELD = "the provider failed (its message is not one of the known kinds, so it is not shown)"

# A status -> the fixed category an operator acts on.
CATEGORIES = {
    400: "bad request",
    401: "unauthorized: check the API key",
    403: "forbidden",
    404: "not found: check the model and base URL",
    408: "timeout",
    409: "conflict",
    413: "request too large",
    422: "unprocessable request",
    429: "rate limited",
    529: "overloaded",  # Anthropic's: retryable like any 5xx
}
SERVER_ERROR, REJECTED = "server error", "rejected"

# Error codes of OpenAI-compatible APIs (OpenAI, Anthropic's, LiteLLM's): kept verbatim.
KNOWN_CODES = frozenset(
    {
        "invalid_api_key",
        "invalid_request",
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "model_not_found",
        "context_length_exceeded",
        "insufficient_quota",
        "rate_limit_exceeded",
        "rate_limit_error",
        "requests",
        "tokens",
        "server_error",
        "api_error",
        "overloaded_error",
        "content_filter",
        # Google's canonical statuses (Gemini's `error.status`).
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
        "NOT_FOUND",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DEADLINE_EXCEEDED",
    }
)

# Why a provider declined (Anthropic's stop reason, Gemini's finish reasons), and Gemini's
# prompt block reasons: any other block reason is reported as UNKNOWN.
REFUSALS = frozenset(
    {
        "refusal",
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "LANGUAGE",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
    }
)
BLOCK_REASONS = frozenset(
    {"SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "MODEL_ARMOR",
     "JAILBREAK", "BLOCKED_REASON_UNSPECIFIED"}
)  # fmt: skip
UNKNOWN_REASON = "UNKNOWN"

# What a malformed 2xx reply was: the providers say one of these, never the reply's text.
MALFORMED = frozenset(
    {
        "not JSON",
        "not a message",
        "not a message stream",
        "not a chat completion",
        "not a chat completion stream",
        "no candidates",
        "malformed function call",
        "not a response stream",
    }
)
# The top-level fields of an OpenAI-compatible chat completion a malformed reply may be
# located at ("invalid choices"); deeper paths are the reply's own keys, never quoted.
REPLY_FIELDS = frozenset(
    {"body", "choices", "usage", "id", "model", "object", "created", "system_fingerprint"}
)

_NAME = r"[A-Za-z0-9_.:-]{1,64}"  # a provider's name (configuration)
_SHAPES = (
    linear(rf"\AHTTP (?P<status>[1-5][0-9][0-9]) from provider {_NAME} "
           rf"\((?P<category>[A-Za-z :]+)\)(?: \[(?P<code>[A-Za-z_]+)\])?\z"),
    linear(rf"\A{_NAME} base URL is not http\(s\)\z"),
    linear(rf"\A{_NAME} unreachable: [A-Za-z_][A-Za-z0-9_]{{0,63}}\z"),
    linear(rf"\A{_NAME} sent a malformed reply: (?P<malformed>[a-z A-Z,]+)\z"),
    linear(rf"\Aprovider {_NAME} refused the request \((?P<refusal>[A-Za-z_ :]+)\)\z"),
)  # fmt: skip


def category(status: int) -> str:
    """A fixed name for a status: what the operator needs to act, nothing the body says."""
    if status in CATEGORIES:
        return CATEGORIES[status]
    return SERVER_ERROR if status >= 500 else REJECTED


def block_reason(reason: str) -> str:
    """Gemini's prompt block reason if it is a known one, else UNKNOWN."""
    return f"prompt blocked: {reason if reason in BLOCK_REASONS else UNKNOWN_REASON}"


def malformed_at(fields: list[str]) -> str:
    """`invalid <fields>` for a malformed reply, each a known top-level field or `body`."""
    known = sorted({f if f in REPLY_FIELDS else "body" for f in fields} or {"body"})
    return "invalid " + ", ".join(known[:3])


def known_detail(message: str) -> str:
    """`message` if it is one of the shapes our providers build, from the vocabulary above;
    else WITHHELD."""
    for shape in _SHAPES:
        groups = shape.captures(message)
        if groups is not None and _known_parts(groups):
            return message
    return WITHHELD


def _known_parts(groups: dict[str, str | None]) -> bool:
    status, cat = groups.get("status"), groups.get("category")
    if status is not None and cat != category(int(status)):
        return False
    code = groups.get("code")
    if code is not None and code not in KNOWN_CODES:
        return False
    malformed = groups.get("malformed")
    if malformed is not None and malformed not in MALFORMED:
        fields = malformed.removeprefix("invalid ").split(", ")
        if not malformed.startswith("invalid ") or not set(fields) <= REPLY_FIELDS:
            return False
    refusal = groups.get("refusal")
    if refusal is not None and refusal not in REFUSALS:
        blocked = refusal.removeprefix("prompt blocked: ")
        if blocked == refusal or blocked not in BLOCK_REASONS | {UNKNOWN_REASON}:
            return False
    return True
