"""Secret and e-mail redaction: pure text functions shared by guardrails and privacy.

Every pattern is compiled by RE2 (contracts/linear.py): redaction runs over user text,
model text and tool results, so its time must be linear in the text whatever the text.
"""

from agentrt.contracts.linear import linear

SECRET_PATTERNS = [
    linear(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@[^\s]+", ignore_case=True),  # cred URLs
    linear(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}", ignore_case=True),
    linear(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),  # JWT
    linear(r"\b(?:sk|pk|rk)-(?:proj-)?[A-Za-z0-9_-]{16,}"),  # OpenAI-style keys
    linear(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    linear(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    linear(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API keys
    linear(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
]
EMAIL = linear(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
MAX_REDACTED = 2000


def redact_text(text: str, max_chars: int | None = MAX_REDACTED) -> str:
    """Mask secrets and e-mail addresses. A heuristic, not a PII guarantee."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub("[REDACTED]", text)
    text = EMAIL.sub("***", text)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + "…[truncated]"
    return text


def has_secret(text: str) -> bool:
    return any(p.search(text) for p in SECRET_PATTERNS) or EMAIL.search(text)
