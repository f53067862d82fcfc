"""Typed answers: a profile's output schema (a JSON Schema; a pydantic model's own schema
when the profile is written in Python), and the check of a final answer against it.

The check is pure and deterministic: the model activity runs it on the answer it recorded
(on a retry too), and the workflow decides on its verdict (contracts.turn.turn_end)."""

import json
import re
from dataclasses import dataclass
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
    """Every check the answer fails, in the order of the answer's paths (none: valid)."""
    try:
        value = answer_json(text)
    except ValueError as exc:
        return [OutputCheck("json", "", f"the answer is not JSON: {exc}")]
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path)
    )
    return [
        OutputCheck(
            str(e.validator),
            "/".join(str(p) for p in e.absolute_schema_path),
            f"at {'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}",
        )
        for e in errors
    ]


def why_invalid(checks: list[OutputCheck]) -> str:
    """The checks as one bounded text (what the model is told, and the event's `content`)."""
    if len(checks) == 1 and checks[0].rule == "json":
        return checks[0].message[:_MAX_ERROR_CHARS]
    return "; ".join(c.message for c in checks)[:_MAX_ERROR_CHARS]


def parse_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The answer's object and None, or None and why it is not valid (for the model)."""
    checks = output_checks(text, schema)
    if checks:
        return None, why_invalid(checks)
    return answer_json(text), None


def feedback(error: str) -> str:
    """The user turn that sends an invalid answer back to the model."""
    return (
        f"Your answer does not match the required output schema ({error}). "
        "Reply with only a JSON value that matches the schema."
    )
