"""Tool names on the wire: OpenAI-compatible APIs accept function names matching
^[a-zA-Z0-9_-]{1,64}$, while ours may hold '.' (MCP tools are `server.tool`) or be longer.

A name that is already wire-safe is sent as is. Any other is sanitised (each unsafe
character becomes '_', cut to fit); when that form is taken by another name of the same
request, a short hash of the real name is appended, and a counter if even that is taken.
The mapping is a bijection per request, so every reply maps back to the real name. Names
offered as tools are placed first, so a tool's wire name does not depend on names the model
made up earlier in the conversation.
"""

import hashlib
import re
from collections.abc import Iterable

MAX_LEN = 64
_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE_CHAR = re.compile(r"[^a-zA-Z0-9_-]")


def is_wire_safe(name: str) -> bool:
    return _SAFE.fullmatch(name) is not None


def _candidates(name: str) -> Iterable[str]:
    base = _UNSAFE_CHAR.sub("_", name)[:MAX_LEN] or "_"
    yield base
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    yield f"{base[: MAX_LEN - 9]}_{digest}"
    n = 2
    while True:  # astronomically unlikely: two names sharing a prefix and a hash
        suffix = f"_{digest}_{n}"
        yield f"{base[: MAX_LEN - len(suffix)]}{suffix}"
        n += 1


class WireNames:
    """`offered`: the request's tool names, bound first; `others`: names only seen in the
    conversation (earlier calls, including made-up ones), bound to what is left."""

    def __init__(self, offered: Iterable[str] = (), others: Iterable[str] = ()) -> None:
        self._to_wire: dict[str, str] = {}
        self._to_real: dict[str, str] = {}
        for group in (list(dict.fromkeys(offered)), list(dict.fromkeys(others))):
            # Safe names keep themselves, so they are placed before any sanitised form.
            for name in sorted(group, key=lambda n: not is_wire_safe(n)):
                if name in self._to_wire:
                    continue
                if is_wire_safe(name) and name not in self._to_real:
                    self._bind(name, name)
                else:
                    self._bind(name, next(c for c in _candidates(name) if c not in self._to_real))

    def _bind(self, real: str, wire: str) -> None:
        self._to_wire[real] = wire
        self._to_real[wire] = real

    def wire(self, name: str) -> str:
        return self._to_wire.get(name, name)

    def real(self, wire: str) -> str:
        """The real name of a wire name; a name the model made up is kept as it came."""
        return self._to_real.get(wire, wire)
