"""Typed answers, the pure parts: a profile's schema (a pydantic model's, or a JSON Schema
checked at load), an answer parsed and checked against it, and what of its object the
answer ceiling lets the store keep."""

import pytest
from pydantic import BaseModel, ValidationError

from agentrt.contracts.output import parse_output
from agentrt.contracts.profiles import Profile
from agentrt.store.runs.answer import ResultNotRetainableError, keep_json

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city", "days"],
}


class Trip(BaseModel):
    city: str
    days: int


def test_a_valid_answer_parses_fenced_or_not() -> None:
    assert parse_output('{"city": "Oslo", "days": 3}', SCHEMA) == (
        {"city": "Oslo", "days": 3},
        None,
    )
    fenced = '```json\n{"city": "Oslo", "days": 3}\n```'
    assert parse_output(fenced, SCHEMA) == ({"city": "Oslo", "days": 3}, None)


def test_an_invalid_answer_says_where_and_why() -> None:
    value, error = parse_output('{"city": 7, "days": 0}', SCHEMA)
    assert value is None and error is not None
    assert "at city: 7 is not of type 'string'" in error
    assert "at days: 0 is less than the minimum of 1" in error
    value, error = parse_output("Oslo, three days", SCHEMA)
    assert value is None and error is not None and error.startswith("the answer is not JSON")


def test_a_python_profile_keeps_its_models_schema_and_a_bad_schema_is_refused() -> None:
    profile = Profile(name="trips", model="scripted:demo", output_schema=Trip)
    assert profile.output_schema == Trip.model_json_schema()
    assert profile.output_retries == 2
    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        Profile(name="bad", model="scripted:demo", output_schema={"type": "no-such-type"})
    with pytest.raises(ValidationError, match="output_retries"):
        Profile(name="bad", model="scripted:demo", output_retries=-1)


def test_the_object_is_kept_as_the_answer_is() -> None:
    value = {"to": "bob@example.com", "n": 2, "cc": ["eve@example.com"]}
    assert keep_json(value, "full") == value
    redacted = keep_json(value, "redacted")
    assert "bob@example.com" not in str(redacted) and "eve@example.com" not in str(redacted)
    assert redacted["n"] == 2 and isinstance(redacted["cc"], list)
    for level in ("metadata", "none"):
        with pytest.raises(ResultNotRetainableError):
            keep_json(value, level)
