"""Linear-time regular expressions, for every pattern that reads user text.

Python's `re` backtracks: a pattern such as `[a-z.]+@[a-z.]+\\.[a-z]{2,}` takes time
quadratic (or worse) in the text on inputs built for it, holding the GIL all along. RE2
(PyPI `google-re2`) matches in time linear in the text for any pattern it accepts, and
refuses the constructs that would need backtracking (back-references, look-around) at
compile time. Every redaction, guardrail and profile pattern is compiled here.

Text goes to RE2 as UTF-8 bytes with lone surrogates passed through (JSON may carry
them): RE2 sees invalid UTF-8 there and never matches it, and the bytes between
matches come back unchanged. RE2's classes are ASCII: `\\w`, `\\d`, `\\s` and `\\b`
do not match non-ASCII letters, digits or spaces as Python's `re` does.
"""

import functools
from collections.abc import Callable
from typing import Any

import re2  # type: ignore[import-untyped]

_CODEC = ("utf-8", "surrogatepass")


class NotLinearError(ValueError):
    """A pattern RE2 cannot compile: bad syntax, or a construct that needs backtracking
    (back-references, look-around, possessive quantifiers) or a repeat count above 1000."""


def _bytes(text: str) -> bytes:
    return text.encode(*_CODEC)


class LinearPattern:
    """A compiled pattern whose every call takes time linear in the text."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, *, ignore_case: bool = False) -> None:
        options = re2.Options()
        options.case_sensitive = not ignore_case
        options.log_errors = False  # a refused pattern is a typed error, not stderr noise
        try:
            self._compiled: Any = re2.compile(_bytes(pattern), options)
        except re2.error as exc:
            raise NotLinearError(_reason(exc)) from None
        self.pattern = pattern

    def search(self, text: str) -> bool:
        """Whether the pattern occurs anywhere in `text`."""
        return self._compiled.search(_bytes(text)) is not None

    def captures(self, text: str) -> dict[str, str | None] | None:
        """The named groups of the first match (None: no match)."""
        found = self._compiled.search(_bytes(text))
        if found is None:
            return None
        groups: dict[bytes, bytes | None] = found.groupdict()
        return {
            k.decode(*_CODEC): (None if v is None else v.decode(*_CODEC)) for k, v in groups.items()
        }

    def group_names(self) -> set[str]:
        return {k.decode(*_CODEC) for k in self._compiled.groupindex}

    def sub(self, replacement: str, text: str) -> str:
        """`text` with every match replaced by `replacement` (taken literally)."""
        encoded = _bytes(text)
        if self._compiled.search(encoded) is None:
            return text  # the common case: one linear scan, no copy
        return _substituted(self._compiled.finditer, encoded, _bytes(replacement))


def _substituted(finditer: Callable[[bytes], Any], encoded: bytes, replacement: bytes) -> str:
    pieces: list[bytes] = []
    last = 0
    for match in finditer(encoded):
        start, end = match.span()
        pieces += (encoded[last:start], replacement)
        last = end
    pieces.append(encoded[last:])
    return b"".join(pieces).decode(*_CODEC)


def _reason(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else exc
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    return f"{text} (RE2 syntax: no back-references or look-around; repeats up to 1000)"


@functools.lru_cache(maxsize=512)
def linear(pattern: str, *, ignore_case: bool = False) -> LinearPattern:
    """Compile `pattern` for linear-time matching; NotLinearError when RE2 refuses it."""
    return LinearPattern(pattern, ignore_case=ignore_case)
