"""What an event payload keeps at each privacy level (full / redacted / metadata / none)."""

from typing import Any

from agentrt.contracts.redaction import redact_tree

# "question": what a remote agent asks the operator (a write's INPUT_REQUESTED event).
CONTENT_KEYS = frozenset(
    {"content", "arguments", "result", "tool_calls", "prompt", "answer", "question"}
)


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
        # Keys too: a tool's argument names are the model's text (redact_tree).
        return {k: (redact_tree(v) if k in CONTENT_KEYS else v) for k, v in payload.items()}
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
