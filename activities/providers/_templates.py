"""Reply templates of the scripted provider: placeholders filled from a rule's captures.

The language is deliberately tiny (no attribute access, indexing, expressions or format
specs, unlike `str.format`):

- `{prompt.NAME}` is the named group NAME of the rule's `regex` (matched on the prompt);
- `{result.NAME}` is the named group NAME of `result.regex` (matched on the latest tool
  result), and `{result.text}` is that whole result;
- `{SOURCE.NAME:int}` must be an integer; a string that is exactly one such placeholder
  becomes a JSON integer (for tool arguments such as `amount_cents`);
- `{{` and `}}` are literal braces; any other brace is a syntax error.

Templates are parsed when the rules file loads, so syntax errors and references to groups
the rule's match cannot capture are load errors. What only the conversation decides (an
optional group that did not take part, an empty capture, a non-integer for `:int`) is a
`TemplateError` when the rule answers: never a silent empty string.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SOURCES = ("prompt", "result")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_PLACEHOLDER = re.compile(
    r"(?P<source>[a-z]+)\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<conv>[a-z]+))?"
)
_INTEGER = re.compile(r"[+-]?[0-9]+")

Captures = Mapping[str, Mapping[str, str | None]]


class TemplateSyntaxError(ValueError):
    """A template that does not parse (raised while the rules file is validated)."""


class TemplateError(Exception):
    """A placeholder the conversation did not fill."""


@dataclass(frozen=True)
class Ref:
    source: str
    name: str
    as_int: bool = False

    def __str__(self) -> str:
        return "{" + f"{self.source}.{self.name}" + (":int" if self.as_int else "") + "}"


Segment = str | Ref


@lru_cache(maxsize=1024)
def parse(text: str) -> tuple[Segment, ...]:
    out: list[Segment] = []
    literal: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        literal.append(text[pos : m.start()])
        pos = m.end()
        token = m.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        body = m.group(1)
        if body is None:
            raise TemplateSyntaxError(
                f"unmatched {token!r} in {text!r} (write {token * 2!r} for a literal brace)"
            )
        p = _PLACEHOLDER.fullmatch(body)
        if p is None or p["source"] not in SOURCES or p["conv"] not in (None, "int"):
            raise TemplateSyntaxError(
                f"bad placeholder {token!r} in {text!r}: write {{prompt.NAME}} or "
                "{result.NAME}, optionally with :int"
            )
        if "".join(literal):
            out.append("".join(literal))
        literal = []
        out.append(Ref(p["source"], p["name"], p["conv"] == "int"))
    literal.append(text[pos:])
    if "".join(literal):
        out.append("".join(literal))
    return tuple(out)


def refs(value: Any) -> Iterator[Ref]:
    """Every placeholder in a template value (a string, or lists/dicts of them)."""
    if isinstance(value, str):
        yield from (s for s in parse(value) if isinstance(s, Ref))
    elif isinstance(value, dict):
        for v in value.values():
            yield from refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from refs(v)


def render(value: Any, captures: Captures) -> Any:
    """Fill a template value; non-string scalars pass through unchanged."""
    if isinstance(value, str):
        segments = parse(value)
        if len(segments) == 1 and isinstance(segments[0], Ref) and segments[0].as_int:
            return int(_filled(segments[0], captures))
        return "".join(s if isinstance(s, str) else _filled(s, captures) for s in segments)
    if isinstance(value, dict):
        return {k: render(v, captures) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, captures) for v in value]
    return value


def _filled(ref: Ref, captures: Captures) -> str:
    value = captures.get(ref.source, {}).get(ref.name)
    if value is None:
        raise TemplateError(f"{ref} captured nothing in this conversation")
    if value == "":
        raise TemplateError(f"{ref} captured an empty string")
    if ref.as_int:
        if _INTEGER.fullmatch(value) is None:
            raise TemplateError(f"{ref} captured a value that is not an integer")
        return str(int(value))
    return value
