"""Typed answers (issue 41), in-process: output schemas as a profile gives them, and model
answers checked against them.

Schemas: generated from the keywords that read model text (`pattern`, `patternProperties`
with patterns built from the pieces a backtracking engine chokes on, `uniqueItems`,
`format`) and the references a worker must never follow (`$ref` to a URL, to nothing).
A profile with one loads, or is refused with its typed error (pydantic's ValidationError,
naming why), in time linear in the schema.

Answers: JSON values, fenced or not, nesting from a few levels to 100,000, texts built
against the old code-fence pattern, long strings and many objects, checked against a
generated schema (or, if the profile would refuse it, against `{}`). `parse_output` must
return its verdict, never raise, within a bound linear in the text; an accepted value must
serialize and be kept redacted (what the completion does with it)."""

import json
import time
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError

from agentrt.contracts.output import parse_output
from agentrt.contracts.profiles import Profile
from agentrt.store.runs.answer import keep_json
from bench.fuzz_core import Finding, LogTrap, Tally, Verdict, drive
from bench.fuzz_limits import PATTERN_PIECES, patterns
from bench.fuzz_local import JSON

# Validation is Python, a few microseconds a value: a bound linear in the text, in this
# thread's CPU time (a loaded machine's wall clock is not the engine's work). The old
# fence pattern took 17 s on 40,000 characters.
FIXED_SECONDS, SECONDS_PER_CHAR = 0.25, 5e-6
# A schema is configuration, loaded once: the bound only catches a blow-up (a pattern or
# reference walk that is not linear), not a loaded machine's noise.
LOAD_SECONDS = 2.0
TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]
REFS = ["#/$defs/a", "#/$defs/missing", "#", "https://169.254.169.254/schema.json",
        "file:///etc/passwd", "other.json#/x"]  # fmt: skip


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3),
            "pattern": patterns(),
            "format": st.sampled_from(["regex", "email", "date-time", "uri", "nosuch"]),
            "minLength": st.integers(0, 5),
            "enum": st.lists(JSON, max_size=3),
            "const": JSON,
            "$ref": st.sampled_from(REFS),
        },
    )

    def nest(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["object", "array"]),
                "properties": st.dictionaries(st.text(max_size=6), inner, max_size=3),
                "patternProperties": st.dictionaries(patterns(), inner, max_size=2),
                "additionalProperties": st.booleans() | inner,
                "items": inner,
                "uniqueItems": st.booleans(),
                "required": st.lists(st.text(max_size=6), max_size=2),
                "anyOf": st.lists(inner, min_size=1, max_size=2),
                "$defs": st.fixed_dictionaries({"a": inner}),
            },
        )

    return st.recursive(leaf, nest, max_leaves=6)


def _fenced(body: str, info: str) -> str:
    return f"```{info}\n{body}\n```"


def _nested(depth: int, kind: str) -> str:
    return ("[" * depth + "]" * depth) if kind == "[" else ('{"a": ' * depth + "1" + "}" * depth)


def answers() -> st.SearchStrategy[str]:
    values = JSON.map(lambda v: json.dumps(v, default=str))
    fenced = st.builds(_fenced, values, st.sampled_from(["", "json", "JSON", "json ", "js"]))
    deep = st.builds(_nested, st.sampled_from([3, 63, 64, 65, 900, 1_000, 100_000]),
                     st.sampled_from(["[", "{"]))  # fmt: skip
    size = st.sampled_from([10, 1_000, 40_000, 200_000])
    against_fence = st.builds(
        lambda n, head, unit: head + unit * (n // len(unit)),
        size,
        st.sampled_from(["```", "```json", "``` ", "  ```\n"]),
        st.sampled_from(["\n", " \n", "```  \n", "\n```", "a"]),
    )
    strings = st.builds(
        lambda n, unit, tail: json.dumps({"code": unit * n + tail, unit * 3: 1}),
        st.sampled_from([44, 1_000, 50_000]),
        st.sampled_from(["a", "aa", "x", "é", "@"]),
        st.sampled_from(["!", "", "\ud800", "y"]),
    )
    many = st.builds(
        lambda n, same: json.dumps([{"n": 0 if same else i} for i in range(n)]),
        st.sampled_from([10, 5_000, 20_000]),
        st.booleans(),
    )
    return st.one_of(values, fenced, deep, against_fence, strings, many, st.text(max_size=60),
                     st.sampled_from(PATTERN_PIECES))  # fmt: skip


def _schema_check(schema: dict[str, Any]) -> Verdict:
    started = time.thread_time()
    try:
        Profile(name="fuzz", model="scripted:demo", output_schema=schema)
        verdict: Verdict = "accepted"
    except ValidationError:
        verdict = "rejected"
    took = time.thread_time() - started
    if took > LOAD_SECONDS:
        raise Finding(f"a schema took {took:.2f}s to load")
    return verdict


def _answer_check(case: tuple[dict[str, Any], str]) -> Verdict:
    schema, text = case
    try:
        Profile(name="fuzz", model="scripted:demo", output_schema=schema)
    except ValidationError:
        schema = {}  # the profile would not load: the answer is checked against anything
    bound = FIXED_SECONDS + SECONDS_PER_CHAR * len(text)
    started = time.thread_time()
    value, error = parse_output(text, schema)
    took = time.thread_time() - started
    if took > bound:
        raise Finding(f"{took:.2f}s over the linear bound {bound:.2f}s ({len(text)} chars)")
    if error is not None:
        if value is not None or not error or len(error) > 2_000:
            raise Finding(f"an invalid answer's verdict is malformed: {value!r} {error[:80]!r}")
        return "rejected"
    json.dumps(value)  # the completion stores it
    keep_json(value, "redacted")  # and keeps it redacted at `redacted`
    return "accepted"


def typed_surface(cases: int, seed_value: int | None, trap: LogTrap) -> list[Tally]:
    loads, checks = Tally("output schemas (profile load)"), Tally("typed answers (parse, check)")
    drive(loads, schemas(), _schema_check, cases=cases, seed_value=seed_value, trap=trap)
    drive(checks, st.tuples(schemas(), answers()), _answer_check,
          cases=cases, seed_value=seed_value, trap=trap)  # fmt: skip
    return [loads, checks]
