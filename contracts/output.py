"""Typed answers: a profile's output schema (a JSON Schema; a pydantic model's own schema
when the profile is written in Python), and the check of a final answer against it.

The check is pure and deterministic: the model activity runs it on the answer it recorded
(on a retry too), and the workflow decides on its verdict (contracts.turn.turn_end)."""

import json
import re
from typing import Any

import jsonschema

# A model often fences its JSON in a Markdown code block: the block's body is the answer.
_FENCED = re.compile(r"\A\s*```(?:json)?\s*\n(.*?)\n?```\s*\Z", re.DOTALL | re.IGNORECASE)
# How much of a validation error goes back to the model (it names the failing path).
_MAX_ERROR_CHARS = 2000


def check_schema(schema: dict[str, Any]) -> None:
    """Raises ValueError when `schema` is not a valid JSON Schema (caught at profile load)."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"output_schema is not a valid JSON Schema: {exc.message}") from None


def answer_json(text: str) -> Any:
    """The JSON value of an answer (the body of a fenced code block, if it is one)."""
    fenced = _FENCED.match(text)
    return json.loads(fenced.group(1) if fenced else text)


def parse_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The answer's object and None, or None and why it is not valid (for the model)."""
    try:
        value = answer_json(text)
    except ValueError as exc:
        return None, f"the answer is not JSON: {exc}"
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path)
    )
    if not errors:
        return value, None
    lines = [f"at {'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
             for e in errors]  # fmt: skip
    return None, "; ".join(lines)[:_MAX_ERROR_CHARS]


def feedback(error: str) -> str:
    """The user turn that sends an invalid answer back to the model."""
    return (
        f"Your answer does not match the required output schema ({error}). "
        "Reply with only a JSON value that matches the schema."
    )
