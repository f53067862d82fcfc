"""Issue 41, M1, M2 and L8: a typed answer is model text, and checking it is linear in it,
off the worker's event loop, and typed when it fails.

- M1: the code-fence pattern (Python `re`) was quadratic: `` ``` `` then 12,500 line
  breaks held a worker's event loop for about 49 s. The fence is now found by string
  operations, and a long answer is checked in a thread.
- M2: an output schema's `pattern` ran on Python `re`: `^(a|aa)+$` over 44 characters
  took 10 s, doubling per character. It runs on RE2; a pattern RE2 refuses, or a `$ref`
  the worker would fetch, fails the profile at load, saying why.
- L8: an answer nested 1,000 levels raised RecursionError: five provider calls, then
  `provider_failed`. Nesting past 64 is now an invalid answer, retried and then
  `invalid_output` like any other."""

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from pydantic import ValidationError
from temporalio.client import Client

from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.errors import ConfigError, ErrorType
from agentrt.contracts.output import MAX_DEPTH, parse_output
from agentrt.contracts.profiles import Profile
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from agentrt.workers.main import make_worker
from tests.security._loop_lag import held_in_every_try, ticking

BACKTRACKING = "^(a|aa)+$"  # exponential in a backtracking engine on "a" * n + "!"
SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": BACKTRACKING}},
    "required": ["code"],
}
# Shapes that made the old fence pattern quadratic: `\s*\n` before a lazy body backtracks
# to every line break of a long run, and the body scans the rest of the text from each.
FENCES: dict[str, Callable[[int], str]] = {
    "fence then line breaks": lambda n: "```" + "\n" * n + "x",
    "json fence then spaced line breaks": lambda n: "```json" + " \n" * (n // 2) + "x",
    "many fences": lambda n: "```\n" + "```  \n" * (n // 6) + "x",
}


def _seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


@pytest.mark.parametrize("shape", sorted(FENCES))
def test_finding_the_code_fence_takes_linear_time(shape: str) -> None:
    make = FENCES[shape]
    # 40,000 characters took the old pattern about 17 s on the first shape.
    first = _seconds(lambda: parse_output(make(40_000), SCHEMA))
    assert first < 0.5, f"{shape}: {first:.2f}s for 40k characters"
    second = _seconds(lambda: parse_output(make(160_000), SCHEMA))
    assert second < 8 * first + 0.5, f"{shape}: {first:.3f}s → {second:.3f}s"


def test_a_schema_pattern_that_backtracks_runs_in_linear_time() -> None:
    took = _seconds(lambda: parse_output('{"code": "' + "a" * 44 + '!"}', SCHEMA))
    assert took < 0.5, f"{took:.2f}s for 44 characters"  # was 10 s, doubling per character
    value, error = parse_output('{"code": "' + "a" * 500_000 + '!"}', SCHEMA)
    assert value is None and error is not None and "does not match" in error
    assert len(error) < 300  # the failing value is quoted short, not whole
    assert parse_output('{"code": "aaaa"}', SCHEMA) == ({"code": "aaaa"}, None)
    # patternProperties too, and keys are text of the model's.
    keyed = {"type": "object", "patternProperties": {BACKTRACKING: {"type": "integer"}}}
    took = _seconds(lambda: parse_output('{"' + "a" * 44 + '!": "x", "aa": 1}', keyed))
    assert took < 0.5
    assert parse_output('{"aa": "x"}', keyed)[1] is not None


def test_unique_items_over_many_objects_takes_linear_time() -> None:
    """jsonschema compared every pair of items that do not sort (objects): quadratic."""

    def objects(n: int) -> str:
        return "[" + ",".join(f'{{"n": {i}}}' for i in range(n)) + "]"

    # 5,000 objects were 12.5 million comparisons in Python before: 60 s on this machine.
    # (Bounds, not a ratio: Python's garbage collector makes allocation-heavy code a little
    # worse than linear, 20,000 objects take 5 to 30 times 5,000's, none of it quadratic.)
    first = _seconds(lambda: parse_output(objects(5_000), {"uniqueItems": True}))
    assert first < 2.0, f"{first:.2f}s for 5,000 objects"
    second = _seconds(lambda: parse_output(objects(20_000), {"uniqueItems": True}))
    assert second < 4.0, f"{second:.2f}s for 20,000 objects"
    assert parse_output('[{"a": 1}, {"a": 1.0}]', {"uniqueItems": True})[1] is not None
    assert parse_output('[{"a": 1}, {"a": true}]', {"uniqueItems": True})[1] is None


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "string", "pattern": "(a)\\1"}, "not a linear-time pattern"),
        ({"patternProperties": {"(?=x)y": {}}}, "not a linear-time pattern"),
        ({"properties": {"p": {"pattern": "(?<!x)y"}}}, "at properties/p"),
        ({"$ref": "https://169.254.169.254/schema.json"}, "not a local reference"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
    ],
)
def test_a_schema_the_worker_cannot_check_safely_fails_the_profile_at_load(
    schema: dict[str, Any], says: str, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError, match=says):
        Profile(name="p", model="scripted:demo", output_schema=schema)
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump({"profiles": [
        {"name": "p", "model": "scripted:demo", "output_schema": schema}]}))  # fmt: skip
    with pytest.raises(ConfigError, match=says):
        load_profiles(path)


def test_a_pattern_under_data_keywords_is_data_and_local_refs_load() -> None:
    schema = {
        "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "properties": {"c": {"$ref": "#/$defs/code"}},
        "examples": [{"pattern": "(a)\\1"}],  # data, not a keyword
    }
    Profile(name="p", model="scripted:demo", output_schema=schema)
    assert parse_output('{"c": "ABC"}', schema)[1] is None
    assert parse_output('{"c": "abc"}', schema)[1] is not None


def test_deep_nesting_is_an_invalid_answer_not_a_recursion_error() -> None:
    for depth in (MAX_DEPTH + 1, 1_000, 100_000):
        value, error = parse_output("[" * depth + "]" * depth, {"type": "array"})
        assert value is None and error is not None and "nested deeper" in error
    deep_object = '{"a": ' * 1_000 + "1" + "}" * 1_000
    assert "nested deeper" in (parse_output(deep_object, {})[1] or "")
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_output(nested, {"type": "array"})[1] is None


# --- end to end: a worker in this process ------------------------------------------------

PROFILES = {
    "profiles": [
        {"name": "typed-echo", "model": "scripted:demo", "instructions": "I", "tools": [],
         "approval": "none", "output_retries": 1, "output_schema": SCHEMA},
        {"name": "any-echo", "model": "scripted:demo", "instructions": "I", "tools": [],
         "approval": "none", "output_retries": 1, "output_schema": {"type": "array"}},
    ]
}  # fmt: skip
# The scripted model answers what follows "echo ": the prompt is the answer.
RULES = """
rules:
  - name: echo
    match: {regex: '(?s)^echo (?P<all>.*)'}
    reply: {text: "{prompt.all}"}
"""


@dataclass
class Echo:
    runtime: AgentRuntime
    runs: RunStore


@pytest_asyncio.fixture
async def echo(client: Client, settings: Settings, tmp_path: Path) -> AsyncIterator[Echo]:
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(PROFILES))
    (tmp_path / "rules.yaml").write_text(RULES)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    mine = settings.replace(
        temporal={"task_queue": queue},
        worker={"profiles_file": tmp_path / "profiles.yaml"},
        providers={"rules_file": tmp_path / "rules.yaml"},
    )
    built = build(mine)
    try:
        async with make_worker(client, built, mine):
            yield Echo(AgentRuntime(client, RunStore(built.ctx), queue), RunStore(built.ctx))
    finally:
        built.close()


async def _failed_invalid(echo: Echo, profile: str, answer: str) -> str:
    view = await asyncio.wait_for(echo.runtime.run(profile, "echo " + answer), 60)
    assert view.status is RunStatus.FAILED, view
    assert view.termination_reason is TerminationReason.INVALID_OUTPUT, view
    events = await echo.runtime.events(view.run_id)
    assert len([e for e in events if e.kind is EventKind.LLM]) == 2  # the answer, one retry
    [failed] = [e for e in events if e.kind is EventKind.RUN_FAILED]
    assert failed.payload["error_type"] == ErrorType.INVALID_OUTPUT.value
    return view.run_id


async def test_an_answer_nested_1000_levels_fails_the_run_invalid_output(echo: Echo) -> None:
    """Before: RecursionError in the model activity, five provider calls, provider_failed."""
    run_id = await _failed_invalid(echo, "any-echo", "[" * 1_000 + "]" * 1_000)
    transcript = [m.content for m in echo.runs.transcript(run_id)]
    assert any(f"nested deeper than {MAX_DEPTH} levels" in t for t in transcript)


async def test_adversarial_answers_never_hold_the_workers_event_loop_100ms(echo: Echo) -> None:
    """A ticker on the worker's own event loop records the longest gap between its 10 ms
    sleeps while runs answer with text built against the old fence pattern (near the
    prompt cap) and against the schema's backtracking pattern, against the same number of
    runs with answers quick to check (tests/security/_loop_lag.py). Before: tens of
    seconds."""
    await echo.runtime.run("typed-echo", 'echo {"code": "aa"}')  # warm up, not measured
    async with ticking() as quiet:  # as many runs, with answers that are quick to check
        for answer in ('{"code": 7}', '{"code": "b"}'):
            await _failed_invalid(echo, "typed-echo", answer)

    async def loud() -> None:
        await _failed_invalid(echo, "typed-echo", FENCES["fence then line breaks"](99_000))
        await _failed_invalid(echo, "typed-echo", '{"code": "' + "a" * 44 + '!"}')

    problem = await held_in_every_try(loud, quiet)
    assert problem is None, problem
