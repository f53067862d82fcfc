"""What an event payload keeps at each privacy level (full / redacted / metadata / none)."""

from typing import Any

from agentrt.contracts.redaction import redact_text

CONTENT_KEYS = frozenset({"content", "arguments", "result", "tool_calls", "prompt", "answer"})


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
