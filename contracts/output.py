"""Typed answers: a profile's output schema (a JSON Schema; a pydantic model's own schema
when the profile is written in Python), and the check of a final answer against it.

The check is pure and deterministic: the model activity runs it on the answer it recorded
(on a retry too), and the workflow decides on its verdict (contracts.turn.turn_end).

The answer is model text, so everything here is linear in it: the code fence is found by
string operations (no backtracking engine), nesting deeper than MAX_DEPTH is an invalid
answer (never a RecursionError), and the schema's `pattern` and `patternProperties` run
on RE2 (contracts/schema_keywords.py), as does every other pattern over user text. A
pattern RE2 refuses, or a `$ref` that is not local, fails the profile at load."""

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
import referencing.exceptions

from agentrt.contracts.schema_keywords import checked_patterns, validator_for

# How much of a validation error goes back to the model (it names the failing path).
_MAX_ERROR_CHARS = 2000
# At most this many schema errors are collected for that message: an answer of a million
# failing items costs no more than one of fifty.
_MAX_ERRORS = 50
# Objects and arrays nested deeper than this make an invalid answer. A typed answer is a
# record, not a tree of unbounded depth; the bound keeps every recursive step after the
# parse (validation, redaction, the payload converter) far from Python's recursion limit.
MAX_DEPTH = 64
_FENCE = "```"
_META = jsonschema.Draft202012Validator(
    jsonschema.Draft202012Validator.META_SCHEMA, format_checker=None
)


def check_schema(schema: dict[str, Any]) -> None:
    """Raises ValueError when `schema` is not a valid JSON Schema, holds a pattern RE2
    cannot run in linear time, or refers outside itself (caught at profile load)."""
    # As check_schema does, without its format checker: its `regex` format would compile
    # the schema's patterns with Python's `re`.
    error = jsonschema.exceptions.best_match(_META.iter_errors(schema))
    if error is not None:
        raise ValueError(f"output_schema is not a valid JSON Schema: {error.message}")
    checked_patterns(schema)


def fenced_body(text: str) -> str | None:
    """The body of a Markdown code block that is the whole answer (```` ``` ```` or
    ```` ```json ````, then a line break, ... ```` ``` ````), else None. String operations
    only: linear in the text, whatever the text."""
    stripped = text.strip()
    if len(stripped) < 2 * len(_FENCE) or not (
        stripped.startswith(_FENCE) and stripped.endswith(_FENCE)
    ):
        return None
    inner = stripped[len(_FENCE) : -len(_FENCE)]
    if inner[:4].lower() == "json":
        inner = inner[4:]
    body = inner.lstrip()
    # The opening line ends with a line break (whitespace after the info string counts).
    if "\n" not in inner[: len(inner) - len(body)]:
        return None
    return body


def answer_json(text: str) -> Any:
    """The JSON value of an answer (the body of a fenced code block, if it is one).
    ValueError when it is not JSON or nests deeper than MAX_DEPTH."""
    body = fenced_body(text)
    try:
        value = json.loads(text if body is None else body)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def depth(value: Any) -> int:
    """How deep objects and arrays nest in `value` (a scalar: 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        children: Any = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                return deepest  # no need to walk the rest
        stack.extend((child, level) for child in children)
    return deepest


@dataclass(frozen=True)
class OutputCheck:
    """One way an answer failed the output schema: the schema's rule (`type`, `required`,
    ...; `json` when it is not JSON at all) and where in the schema it is
    (`properties/amount/type`): both the profile's words, never the model's. `message` is
    the validator's sentence, which quotes the answer (model text)."""

    rule: str
    schema_path: str
    message: str


def output_checks(text: str, schema: dict[str, Any]) -> list[OutputCheck]:
    """Every check the answer fails (at most _MAX_ERRORS), in the order of the answer's
    paths (none: valid)."""
    return _checked(text, schema)[1]


def _checked(text: str, schema: dict[str, Any]) -> tuple[Any, list[OutputCheck]]:
    try:
        value = answer_json(text)
    except ValueError as exc:
        return None, [OutputCheck("json", "", f"the answer is not JSON: {exc}")]
    try:
        errors = list(itertools.islice(_errors(schema, value), _MAX_ERRORS))
    except (RecursionError, referencing.exceptions.Unresolvable):
        # A schema the load-time checks could not see through (a reference under a
        # subschema's own $id that does not resolve): no answer can pass it.
        return None, [
            OutputCheck("schema", "", "the answer could not be checked against the schema")
        ]
    errors.sort(key=lambda e: [str(p) for p in e.path])
    return value, [
        OutputCheck(
            str(e.validator),
            "/".join(str(p) for p in e.absolute_schema_path),
            f"at {'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}",
        )
        for e in errors
    ]


def why_invalid(checks: list[OutputCheck]) -> str:
    """The checks as one bounded text (what the model is told, and the event's `content`)."""
    if len(checks) == 1 and checks[0].rule in ("json", "schema"):
        return checks[0].message[:_MAX_ERROR_CHARS]
    return "; ".join(c.message for c in checks)[:_MAX_ERROR_CHARS]


def parse_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The answer's object and None, or None and why it is not valid (for the model)."""
    value, checks = _checked(text, schema)
    if checks:
        return None, why_invalid(checks)
    return value, None


def _errors(schema: dict[str, Any], value: Any) -> Iterator[jsonschema.ValidationError]:
    return validator_for(schema).iter_errors(value)  # type: ignore[no-any-return]


def feedback(error: str) -> str:
    """The user turn that sends an invalid answer back to the model."""
    return (
        f"Your answer does not match the required output schema ({error}). "
        "Reply with only a JSON value that matches the schema."
    )
