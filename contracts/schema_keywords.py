"""The JSON Schema validator typed answers are checked with: Draft 2020-12, with every
keyword that could take more than linear time over model text replaced, and nothing
fetched.

- `pattern` and `patternProperties` run on RE2 (contracts/linear.py). jsonschema's own
  run Python's `re`, which backtracks: a pattern such as `^(a|aa)+$` over 44 characters
  of model output held a worker for seconds. A pattern RE2 refuses (back-references,
  look-around) fails the profile at load (`checked_patterns`), naming it and why.
- `uniqueItems` compares canonical forms in a set (linear), where jsonschema falls back
  to comparing every pair (quadratic) for items that do not sort, such as objects.
- `format` is not asserted (no format checker): it is an annotation in 2020-12, and the
  checker's `regex` format would compile with Python's `re`.
- `$ref` must be local (`#...`): the validator's registry retrieves nothing, where
  jsonschema's default would fetch a remote reference from the worker.
"""

import functools
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import validators

from agentrt.contracts.linear import LinearPattern, NotLinearError, linear

# Keywords whose values are data, not schemas: a "pattern" key under them is no pattern.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_REF_KEYWORDS = ("$ref", "$dynamicRef")
_BASE = "urn:agentrt:output-schema"
# How much of a failing value an error message quotes.
_QUOTED = 60


def _compiled(pattern: str) -> LinearPattern:
    return linear(pattern)  # cached; checked at load, so it compiles


def _quoted(value: Any) -> str:
    shown = repr(value) if not isinstance(value, list | dict) else type(value).__name__
    return shown if len(shown) <= _QUOTED else shown[: _QUOTED - 1] + "…"


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield jsonschema.ValidationError(f"{_quoted(instance)} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, _schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled = _compiled(pattern)
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _unique_items(validator: Any, unique: bool, instance: Any, _schema: Any) -> Iterator[Any]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = canonical(item)
        if key in seen:
            yield jsonschema.ValidationError(f"{_quoted(item)} is not unique in the array")
            return
        seen.add(key)


def canonical(value: Any) -> Any:
    """A hashable form equal for JSON-equal values (1 and 1.0 alike, true and 1 not, keys
    in any order). Numbers become text, so no chosen set of numbers can make every hash
    collide (an int hashes to itself modulo a known prime)."""
    if value is True or value is False or value is None:
        return ("k", value)
    if isinstance(value, int):
        return ("n", str(value))
    if isinstance(value, float):
        return ("n", str(int(value)) if value.is_integer() else repr(value))
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, canonical(v)) for k, v in value.items()))
    return ("?", repr(value))


# `extend` has no annotations in jsonschema's stubs; the class it makes is a Validator.
LinearValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties, "uniqueItems": _unique_items},
)


@functools.lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    schema = json.loads(schema_json)
    # A registry with no `retrieve`: an unknown reference is Unresolvable, never fetched.
    return LinearValidator(schema, registry=referencing.Registry(), format_checker=None)


def validator_for(schema: dict[str, Any]) -> Any:
    """The validator of `schema`, built once per schema (a worker checks every answer of
    a profile against the same one)."""
    return _validator(json.dumps(schema, sort_keys=True))


def checked_patterns(schema: dict[str, Any]) -> None:
    """ValueError naming the first pattern RE2 cannot run, or reference that is not local
    or does not resolve, and where in the schema it is."""
    resolver = _resolver(schema)
    for path, keyword, value, rooted in _strings(schema):
        where = "/".join(path) or "(root)"
        if keyword in ("pattern", "patternProperties"):
            try:
                linear(value)
            except NotLinearError as exc:
                raise ValueError(
                    f"output_schema: {keyword} {value!r} at {where} is not a linear-time "
                    f"pattern: {exc}"
                ) from None
        elif not value.startswith("#"):
            raise ValueError(
                f"output_schema: {keyword} {value!r} at {where} is not a local reference "
                "(#...): the worker fetches nothing"
            )
        elif rooted:
            try:
                resolver.lookup(value)
            except referencing.exceptions.Unresolvable:
                raise ValueError(
                    f"output_schema: {keyword} {value!r} at {where} does not resolve"
                ) from None


def _resolver(schema: dict[str, Any]) -> Any:
    """A resolver over the schema itself, for references relative to its root."""
    resource = referencing.jsonschema.DRAFT202012.create_resource(schema)
    uri = resource.id() or _BASE
    return referencing.Registry().with_resource(uri, resource).resolver(base_uri=uri)


def _strings(schema: Any) -> Iterator[tuple[list[str], str, str, bool]]:
    """Every (path, keyword, value, rooted) of a pattern (`pattern`'s value,
    `patternProperties`' keys) and of a reference in the schema, walked without recursion.
    `rooted`: no subschema on the way sets its own `$id` (its references resolve against
    that base, which the validator knows at run time)."""
    stack: list[tuple[Any, list[str], bool]] = [(schema, [], True)]
    while stack:
        node, path, rooted = stack.pop()
        if isinstance(node, list):
            stack.extend((v, [*path, str(i)], rooted) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        rooted = rooted and (not path or "$id" not in node)
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                yield path, "pattern", value, rooted
            elif key == "patternProperties" and isinstance(value, dict):
                yield from ((path, "patternProperties", p, rooted) for p in value)
            elif key in _REF_KEYWORDS and isinstance(value, str):
                yield path, key, value, rooted
            if isinstance(value, dict | list):
                stack.append((value, [*path, str(key)], rooted))
