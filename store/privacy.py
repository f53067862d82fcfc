"""What an event payload keeps at each privacy level (full / redacted / metadata / none)."""

import re
from typing import Any

CONTENT_KEYS = frozenset({"content", "arguments", "result", "tool_calls", "prompt", "answer"})

_SECRET_PATTERNS = [
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@[^\s]+", re.I),  # credential URLs
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}", re.I),
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),  # JWT
    re.compile(r"\b(?:sk|pk|rk)-(?:proj-)?[A-Za-z0-9_-]{16,}"),  # OpenAI-style keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
]
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
MAX_REDACTED = 2000


def redact_text(text: str) -> str:
    """Mask secrets and e-mail addresses. A heuristic, not a PII guarantee."""
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[REDACTED]", text)
    text = _EMAIL.sub("***", text)
    if len(text) > MAX_REDACTED:
        text = text[:MAX_REDACTED] + "…[truncated]"
    return text


def _redact_tree(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_tree(v) for v in value]
    return value


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | dict):
        return len(value)
    return 0


def filter_payload(payload: dict[str, Any], level: str) -> dict[str, Any]:
    """Apply a privacy level; an unknown level is treated as `metadata` (fail closed)."""
    if level == "full":
        return payload
    if level == "redacted":
        return {k: (_redact_tree(v) if k in CONTENT_KEYS else v) for k, v in payload.items()}
    kept: dict[str, Any] = {}
    for key, value in payload.items():
        if key in CONTENT_KEYS:
            kept[f"{key}_size"] = _size(value)
            if key == "tool_calls" and isinstance(value, list):
                kept["tool_names"] = [c.get("name") for c in value if isinstance(c, dict)]
        else:
            kept[key] = value
    kept["content_withheld"] = True
    return kept
