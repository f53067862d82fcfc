"""A tool's failure as one log line an operator can act on: the exception's type, its
message (redacted, bounded, on one line, the call's argument values masked) and the
tool's own frame: where in the tool's code it went wrong, not where in ours or in a
library. Never a traceback for an expected failure (the frame says where), never an
argument, never a secret; at privacy `metadata` and `none` not the message either (it may
quote what the model sent): the type and the frame only.

The tool's frame: the traceback's frames outside agentrt and the standard library are the
tool's and the libraries it called; the outermost of them is the tool function itself
(the runtime called it), so its top-level package is the tool's, and the innermost frame
of that package is where the tool raised, or called what raised."""

import sys
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from agentrt.contracts.redaction import redact_text

MAX_MESSAGE_CHARS = 300
MASKED = "[argument]"
# Argument values shorter than this are not masked: "1" or "id" would mask half a message.
MIN_MASKED_CHARS = 4
MAX_MASKED_VALUES = 100
_OURS = "agentrt"
_WITH_TEXT = frozenset({"full", "redacted"})


def _frames(tb: TracebackType | None) -> Iterator[tuple[str, int, str]]:
    """(module, line, function) of each frame, outermost first."""
    while tb is not None:
        frame = tb.tb_frame
        yield str(frame.f_globals.get("__name__", "?")), tb.tb_lineno, frame.f_code.co_name
        tb = tb.tb_next


def _top(module: str) -> str:
    return module.partition(".")[0]


def tool_frame(exc: BaseException) -> str | None:
    """`module:line in function` of the tool's own frame (see the module's docstring); None
    when no frame is the tool's (an MCP tool's failure is raised in our client code)."""
    theirs = [
        f
        for f in _frames(exc.__traceback__)
        if _top(f[0]) != _OURS and _top(f[0]) not in sys.stdlib_module_names
    ]
    if not theirs:
        return None
    package = _top(theirs[0][0])
    module, line, function = [f for f in theirs if _top(f[0]) == package][-1]
    return f"{module}:{line} in {function}"


def _values(arguments: Any, found: list[str]) -> None:
    """The argument values worth masking (strings and numbers), depth first, bounded."""
    if len(found) >= MAX_MASKED_VALUES:
        return
    if isinstance(arguments, dict):
        for v in arguments.values():
            _values(v, found)
    elif isinstance(arguments, list):
        for v in arguments:
            _values(v, found)
    elif isinstance(arguments, str | int | float) and not isinstance(arguments, bool):
        text = str(arguments)
        if len(text) >= MIN_MASKED_CHARS:
            found.append(text)


def masked_message(exc: BaseException, arguments: dict[str, Any]) -> str:
    """The exception's message on one line, bounded, every argument value in it masked,
    then redacted (secrets, e-mail addresses)."""
    text = " ".join(str(exc).split())[: MAX_MESSAGE_CHARS * 2]
    values: list[str] = []
    _values(arguments, values)
    # The longest first: a value that contains another is masked whole.
    for value in sorted(set(values), key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASKED)
    return redact_text(text, MAX_MESSAGE_CHARS)


def failure_text(exc: BaseException, arguments: dict[str, Any], privacy: str) -> str:
    """`Type: message (at module:line in function)`, as the privacy level allows."""
    text = type(exc).__name__
    if privacy in _WITH_TEXT and (message := masked_message(exc, arguments)):
        text += f": {message}"
    frame = tool_frame(exc)
    return text + (f" (at {frame})" if frame else "")
