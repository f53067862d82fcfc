"""In-process surfaces: the rules and profiles files, and tool arguments from the model
(TypedTool / `@tool` validation, the MCP wrapper's schema check).

Files: a load returns, or raises the file's typed error (RulesFileError, ConfigError); a
rules file that loads also answers generated conversations with a reply or a typed error.
Tools: a call returns, or raises ToolInputError before anything ran (the tool's DB rows and
its call counter are unchanged).
"""

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from sqlalchemy import Engine
from temporalio.exceptions import ApplicationError

from agentrt.activities.ports import ToolContext, ToolInputError
from agentrt.activities.providers.scripted import (
    ScriptedProvider,
    ScriptedProviderError,
    load_rules,
)
from agentrt.activities.toolbox.decorator import FunctionTool, tool
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.activities.toolbox.mcp import check_arguments
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError, RulesFileError
from agentrt.contracts.messages import Message, ProviderRequest, ToolSpec
from agentrt.core.profiles import load_profiles
from agentrt.store.db.context import StoreContext
from agentrt.store.demo import DemoWorld
from bench.fuzz_core import Finding, LogTrap, Tally, Verdict, changed, drive, snapshot

# --- JSON-ish values ---------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def _mutate(value: Any, draw: st.DrawFn, depth: int = 0) -> Any:
    """The value with one random node replaced, removed or given an unknown key."""
    if isinstance(value, dict) and value and depth < 6 and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(value, key=str)))
        out = dict(value)
        action = draw(st.integers(0, 4))
        if action == 0:
            del out[key]
        elif action == 1:
            out[draw(st.text(max_size=10))] = draw(JSON)
        else:
            out[key] = _mutate(value[key], draw, depth + 1)
        return out
    if isinstance(value, list) and value and depth < 6 and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        if draw(st.booleans()):
            out_list[i] = _mutate(value[i], draw, depth + 1)
        else:
            del out_list[i]
        return out_list
    return draw(JSON | st.sampled_from(["{prompt.x}", "{result.text}", "{", "(?P<x>a", "a:b"]))


@st.composite
def file_texts(draw: st.DrawFn, seed_doc: Any) -> tuple[str, bytes]:
    """(suffix, content): the seed document mutated (YAML or JSON), YAML-ish text, or bytes."""
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        doc = seed_doc
        for _ in range(draw(st.integers(1, 3))):
            doc = _mutate(doc, draw)
        if draw(st.booleans()):
            return ".json", json.dumps(doc, default=str).encode()
        try:
            return ".yaml", yaml.safe_dump(doc, allow_unicode=True).encode()
        except yaml.YAMLError:
            return ".yaml", repr(doc).encode()
    if kind <= 7:
        alphabet = st.sampled_from(
            [*list("abc:-[]{}!&*#|>'\"\n  ?,%@`\t\x00\x85\ufeff"), "!!set", "!!python/object"]
        )
        return draw(st.sampled_from([".yaml", ".json"])), "".join(
            draw(st.lists(alphabet, max_size=60))
        ).encode("utf-8", "surrogatepass")
    if kind == 8:
        depth = draw(st.sampled_from([300, 1200]))
        return draw(st.sampled_from([".yaml", ".json"])), ("[" * depth + "]" * depth).encode()
    return draw(st.sampled_from([".yaml", ".json"])), draw(st.binary(max_size=80))


CONVERSATIONS = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant", "tool"]),
        content=st.text(max_size=40) | st.sampled_from(["refund order 1042", "which order"]),
        tool_name=st.none() | st.sampled_from(["lookup_order", "issue_refund"]),
        is_error=st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


def files_surface(
    rules_seed: Path, profiles_seed: Path, cases: int, seed_value: int | None, trap: LogTrap
) -> list[Tally]:
    tmp = Path(tempfile.mkdtemp(prefix="agentrt-fuzz-"))
    rules_doc = yaml.safe_load(rules_seed.read_text())
    profiles_doc = yaml.safe_load(profiles_seed.read_text())

    def write(suffix: str, content: bytes) -> Path:
        path = tmp / f"case{suffix}"
        path.write_bytes(content)
        return path

    def rules_check(case: tuple[tuple[str, bytes], list[Message], int]) -> Verdict:
        (suffix, content), messages, round_no = case
        try:
            rules = load_rules(write(suffix, content))
        except RulesFileError:
            return "rejected"
        request = ProviderRequest(
            model="demo", messages=messages, tools=None if round_no > 3 else [], round=round_no
        )
        try:
            asyncio.run(ScriptedProvider(rules).complete(request))
        except (ScriptedProviderError, ApplicationError):
            pass
        return "accepted"

    def profiles_check(case: tuple[str, bytes]) -> Verdict:
        try:
            load_profiles(write(*case))
        except ConfigError:
            return "rejected"
        return "accepted"

    rules, profiles = Tally("rules file"), Tally("profiles file")
    drive(
        rules,
        st.tuples(file_texts(rules_doc), CONVERSATIONS, st.integers(1, 5)),
        rules_check,
        cases=cases,
        seed_value=seed_value,
        trap=trap,
    )
    drive(
        profiles,
        file_texts(profiles_doc),
        profiles_check,
        cases=cases,
        seed_value=seed_value,
        trap=trap,
    )
    return [rules, profiles]


# --- tool arguments ----------------------------------------------------------------------


class Address(BaseModel):
    street: str = Field(min_length=1)
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


def fuzz_tools(calls: list[str]) -> list[FunctionTool]:
    """`@tool` functions of varied signatures; each records its call in `calls`."""

    @tool(effect=ToolEffect.READ_ONLY)
    def scalars(n: int, ratio: float, flag: bool = False, label: str = "x") -> str:
        """Scalars with defaults."""
        calls.append("scalars")
        return f"{n} {ratio} {flag} {label}"

    @tool
    async def constrained(
        amount: Annotated[int, Field(gt=0, le=1000)],
        mode: Literal["fast", "slow"],
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """Constraints, a literal and an optional list."""
        calls.append("constrained")
        return {"amount": amount, "mode": mode, "tags": tags}

    @tool(effect=ToolEffect.IDEMPOTENT_WRITE)
    def nested(address: Address, extra: dict[str, int], ctx: ToolContext) -> Address:
        """A nested model and the context."""
        calls.append("nested")
        return address

    return [scalars, constrained, nested]


# One valid call per tool (by name), mutated by the strategy into near misses.
VALID_ARGS: dict[str, dict[str, Any]] = {
    "scalars": {"n": 3, "ratio": 0.5, "flag": True, "label": "y"},
    "constrained": {"amount": 10, "mode": "fast", "tags": ["a"]},
    "nested": {"address": {"street": "Main", "zip": "12345"}, "extra": {"a": 1}},
    "lookup_order": {"order_id": "1042"},
    "set_record": {"key": "fuzz", "value": [1, "two"]},
    "issue_refund": {"order_id": "1042", "amount_cents": 500, "memo": "fuzz"},
}


def _args_for(schema: dict[str, Any], valid: dict[str, Any] | None = None) -> Any:
    """Arguments near a tool's schema: its own keys with JSON values, plus extra keys, and
    (when one is known) a valid call with a node replaced, removed or added."""
    keys = [*sorted((schema.get("properties") or {}).keys()), "", "extra", "__proto__"]
    loose = st.dictionaries(st.sampled_from(keys) | st.text(max_size=8), JSON, max_size=5)
    if valid is None:
        return loose

    @st.composite
    def near(draw: st.DrawFn) -> dict[str, Any]:
        out = _mutate(valid, draw)
        return out if isinstance(out, dict) else valid

    return loose | near() | st.just(valid)


def tools_surface(
    engine: Engine, ctx: StoreContext, cases: int, seed_value: int | None, trap: LogTrap
) -> list[Tally]:
    calls: list[str] = []
    tools: list[Any] = [*fuzz_tools(calls), *demo_tools(DemoWorld(ctx))]
    context = ToolContext(run_id="fuzz-run", call_id="call_1", idempotency_key="fuzz-key")
    specs: list[ToolSpec] = [t.spec for t in tools]
    loop = asyncio.new_event_loop()

    def typed_check(case: tuple[int, dict[str, Any]]) -> Verdict:
        index, arguments = case
        before, seen = snapshot(engine, ("demo_record", "demo_ledger")), len(calls)
        try:
            loop.run_until_complete(tools[index](arguments, context))
        except ToolInputError:
            after = snapshot(engine, ("demo_record", "demo_ledger"))
            if changed(before, after) or len(calls) != seen:
                raise Finding(
                    f"refused arguments changed state: {changed(before, after)}"
                ) from None
            return "rejected"
        return "accepted"

    def mcp_check(case: tuple[dict[str, Any], dict[str, Any]]) -> Verdict:
        schema, arguments = case
        try:
            check_arguments(schema, arguments)
        except ToolInputError:
            return "rejected"
        return "accepted"

    typed_cases = st.integers(0, len(tools) - 1).flatmap(
        lambda i: st.tuples(
            st.just(i), _args_for(specs[i].parameters, VALID_ARGS.get(specs[i].name))
        )
    )
    schemas = st.sampled_from([s.parameters for s in specs]) | st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(
                st.text(max_size=6),
                st.fixed_dictionaries(
                    {},
                    optional={
                        "type": st.sampled_from(
                            ["string", "integer", "number", "boolean", "object", "array", "null"]
                        )
                        | st.lists(st.sampled_from(["string", "null", "integer"]), max_size=3)
                    },
                ),
                max_size=4,
            ),
        },
        optional={
            "required": st.lists(st.text(max_size=6), max_size=3),
            "additionalProperties": st.booleans(),
        },
    )
    mcp_cases = schemas.flatmap(lambda s: st.tuples(st.just(s), _args_for(s)))
    typed, mcp = Tally("tool arguments (@tool, TypedTool)"), Tally("MCP tool schema check")
    try:
        drive(typed, typed_cases, typed_check, cases=cases, seed_value=seed_value, trap=trap)
        drive(mcp, mcp_cases, mcp_check, cases=cases, seed_value=seed_value, trap=trap)
    finally:
        loop.close()
    return [typed, mcp]
