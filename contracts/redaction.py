"""Secret and e-mail redaction: pure text functions shared by guardrails and privacy.

Every pattern is compiled by RE2 (contracts/linear.py): redaction runs over user text,
model text and tool results, so its time must be linear in the text whatever the text.
"""

from typing import Any

from agentrt.contracts.linear import linear

_SECRETS = [  # (pattern, ignore case)
    (r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@[^\s]+", True),  # credential URLs
    (r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}", True),
    (r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", False),  # JWT
    (r"\b(?:sk|pk|rk)-(?:proj-)?[A-Za-z0-9_-]{16,}", False),  # OpenAI-style keys
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}", False),  # GitHub tokens
    (r"\bAKIA[0-9A-Z]{16}\b", False),  # AWS access key ids
    (r"\bAIza[0-9A-Za-z_-]{30,}", False),  # Google API keys
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}", False),  # Slack tokens
]
SECRET_PATTERNS = [linear(p, ignore_case=i) for p, i in _SECRETS]
EMAIL = linear(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
MAX_REDACTED = 2000


# Every secret pattern and the e-mail one as one alternation: whether any occurs is one
# scan of the text, not nine (each guardrail check of a prompt or a reply asks it).
_ANY = linear(
    "|".join([*(f"(?i:{p})" if i else f"(?:{p})" for p, i in _SECRETS), f"(?:{EMAIL.pattern})"])
)


def redact_text(text: str, max_chars: int | None = MAX_REDACTED) -> str:
    """Mask secrets and e-mail addresses. A heuristic, not a PII guarantee."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub("[REDACTED]", text)
    text = EMAIL.sub("***", text)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + "…[truncated]"
    return text


def has_secret(text: str) -> bool:
    return _ANY.search(text)


# How deep redact_tree goes: below this a subtree is replaced, not walked (a typed answer
# is bounded at 64 already; tool arguments nested deeper are withheld at `redacted`).
MAX_TREE_DEPTH = 64
TOO_DEEP = "[REDACTED: nested too deep]"


def redact_tree(value: Any, max_chars: int | None = MAX_REDACTED, _depth: int = 0) -> Any:
    """A JSON value with every string redacted, dictionary keys included: a key is text
    the model or the user wrote as much as a value is (`{"bob@example.com": 1}`). Two keys
    that redact alike are told apart by a suffix, so none overwrites another."""
    if isinstance(value, str):
        return redact_text(value, max_chars)
    if not isinstance(value, dict | list):
        return value
    if _depth >= MAX_TREE_DEPTH:
        return TOO_DEEP
    if isinstance(value, list):
        return [redact_tree(v, max_chars, _depth + 1) for v in value]
    out: dict[str, Any] = {}
    for key, item in value.items():
        shown = redact_text(key, max_chars) if isinstance(key, str) else key
        if shown in out:
            n = 2
            while f"{shown} ({n})" in out:
                n += 1
            shown = f"{shown} ({n})"
        out[shown] = redact_tree(item, max_chars, _depth + 1)
    return out


# RE2's `\s` (ASCII only, no vertical tab): the only characters no secret pattern can
# match across, bar the one that allows it (`Bearer\s+token`).
_RE2_SPACE = frozenset("\t\n\f\r ")
_SPANS_SPACE = "bearer"


def settled_length(text: str) -> int:
    """How much of `text`, a reply still being written, redacts the same whatever comes
    next: up to its last whitespace that no secret can match across.

    The patterns are unbounded (`sk-` then 16 or more characters...), so no fixed hold-back
    is enough; but every one of them but `Bearer\\s+…` stops at whitespace, so a cut at a
    whitespace run not after "bearer" splits no match, and redacting the parts one by one
    gives what redacting the whole gives. A text with no such cut is held back entirely."""
    end = len(text)
    while end > 0:
        cut = end - 1
        while cut >= 0 and text[cut] not in _RE2_SPACE:
            cut -= 1
        if cut < 0:
            return 0
        start = cut  # the whitespace run that ends at `cut`
        while start > 0 and text[start - 1] in _RE2_SPACE:
            start -= 1
        if not text[:start].lower().endswith(_SPANS_SPACE):
            return cut + 1
        end = start
    return 0


class StreamRedactor:
    """Redacts a text that comes in pieces: `feed` returns what may be shown of it so far,
    `feed(..., final=True)` the rest. What it returns, joined, is `redact_text` of the whole
    (untruncated): a secret split across pieces never shows (tests/contracts)."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str, *, final: bool = False) -> str:
        held = self._held + text
        cut = len(held) if final else settled_length(held)
        self._held = held[cut:]
        return redact_text(held[:cut], max_chars=None) if cut else ""

    def reset(self) -> None:
        self._held = ""
