"""`@tool` at its boundary: schema, description, effect, context, arguments and results, and
the fail-soft path through the tool activity (ActivityEnvironment, real database)."""

import threading
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt import ToolContext, ToolEffect, tool
from agentrt.activities.fence import WriteActivities, _sql
from agentrt.activities.ports import ToolInputError, ToolResultError, attempt_bound_of
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.decorator import FunctionTool
from agentrt.activities.tools import GENERIC_TOOL_ERROR, ToolActivities
from agentrt.contracts.errors import ConfigError, ErrorType
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.run import FenceRequest
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import begin_run, tool_request

CTX = ToolContext("run", "r1.1", "key")


@tool
def refund(
    order_id: str,
    amount_cents: Annotated[int, Field(gt=0, le=1000)],
    memo: str = "",
    currency: str = Field(default="EUR", pattern="^[A-Z]{3}$"),
) -> str:
    """Refund an amount on an order.

    Appends a ledger row."""
    return f"{order_id}:{amount_cents}:{currency}:{memo}"


@tool(effect=ToolEffect.READ_ONLY, name="find_order", description="Find an order.")
async def lookup(order_id: str, ctx: ToolContext) -> dict[str, Any]:
    return {"order": order_id, "run": ctx.run_id, "call": ctx.call_id, "key": ctx.idempotency_key}


def test_the_schema_comes_from_the_signature_and_the_description_from_the_docstring() -> None:
    assert isinstance(refund, FunctionTool)
    spec = refund.spec
    assert spec.name == "refund"
    assert spec.description == "Refund an amount on an order.\n\nAppends a ledger row."
    props = spec.parameters["properties"]
    assert set(props) == {"order_id", "amount_cents", "memo", "currency"}
    assert spec.parameters["required"] == ["order_id", "amount_cents"]
    assert props["amount_cents"]["type"] == "integer"
    assert (
        props["amount_cents"]["exclusiveMinimum"] == 0 and props["amount_cents"]["maximum"] == 1000
    )
    assert props["memo"]["default"] == "" and props["currency"]["pattern"] == "^[A-Z]{3}$"


def test_no_declared_effect_is_a_non_idempotent_write_and_options_override() -> None:
    assert refund.effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert lookup.effect is ToolEffect.READ_ONLY
    assert lookup.spec.name == "find_order" and lookup.spec.description == "Find an order."

    @tool()
    def undocumented(x: int) -> int:
        return x

    assert undocumented.effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert undocumented.spec.description == "undocumented"


async def test_sync_and_async_tools_run_and_a_tool_context_is_injected_not_offered() -> None:
    assert await refund({"order_id": "1", "amount_cents": "5"}, CTX) == "1:5:EUR:"
    assert set(lookup.spec.parameters["properties"]) == {"order_id"}
    with pytest.raises(ToolInputError, match=r"unexpected argument.*ctx"):
        await lookup({"order_id": "1", "ctx": {}}, CTX)  # the model cannot supply the context
    assert await lookup({"order_id": "1"}, CTX) == (
        '{"order": "1", "run": "run", "call": "r1.1", "key": "key"}'
    )


async def test_bad_arguments_are_refused_before_the_function_runs() -> None:
    ran: list[int] = []

    @tool
    def count(n: Annotated[int, Field(gt=0)]) -> int:
        ran.append(n)
        return n

    with pytest.raises(ToolInputError, match="unexpected argument"):
        await count({"n": 1, "rm_rf": True}, CTX)
    with pytest.raises(ToolInputError, match="n: Input should be greater than 0"):
        await count({"n": -1}, CTX)
    with pytest.raises(ToolInputError, match="n: Field required"):
        await count({}, CTX)
    with pytest.raises(ToolInputError, match="currency"):
        await refund({"order_id": "1", "amount_cents": 5, "currency": "euro"}, CTX)
    assert ran == []


class Receipt(BaseModel):
    id: int


@dataclass
class Point:
    x: int


async def test_results_are_text_or_json_and_anything_else_is_a_typed_error() -> None:
    @tool
    def give(kind: str) -> Any:
        values: dict[str, Any] = {
            "str": "plain",
            "dict": {"a": [1, 2.5, None]},
            "model": Receipt(id=3),
            "dataclass": Point(x=1),
            "none": None,
            "object": object(),
            "nan": float("nan"),
        }
        return values[kind]

    assert await give({"kind": "str"}, CTX) == "plain"
    assert await give({"kind": "dict"}, CTX) == '{"a": [1, 2.5, null]}'
    assert await give({"kind": "model"}, CTX) == '{"id": 3}'
    assert await give({"kind": "dataclass"}, CTX) == '{"x": 1}'
    assert await give({"kind": "none"}, CTX) == "null"
    with pytest.raises(ToolResultError, match="returned a object, which is neither"):
        await give({"kind": "object"}, CTX)
    with pytest.raises(ToolResultError, match="returned a float"):
        await give({"kind": "nan"}, CTX)


def test_a_function_the_schema_cannot_describe_is_refused_at_decoration() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def star(*args: int) -> int:
        return 0

    with pytest.raises(TypeError, match="'x' has no type annotation"):
        tool(untyped)
    with pytest.raises(TypeError, match=r"\*args"):
        tool(star)
    with pytest.raises(ValueError, match="tool name 'two words'"):
        tool(name="two words")(star)


async def test_in_the_activity_the_context_carries_heartbeat_and_logger(
    parts: WorkerResources,
) -> None:
    seen: dict[str, Any] = {}

    @tool(effect=ToolEffect.READ_ONLY)
    def probe(ctx: ToolContext) -> str:
        ctx.heartbeat("halfway")  # from the tool's thread, not the loop's
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        seen["ctx"] = ctx
        return "ok"

    run_id = begin_run(parts)
    acts = ToolActivities(registry=ToolRegistry([probe]), steps=ToolStepStore(parts.ctx))
    env = ActivityEnvironment()
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.append(details)
    outcome = await env.run(acts.execute, tool_request(run_id, "probe", {}))
    assert not outcome.is_error and seen["thread"]
    ctx = seen["ctx"]
    assert (ctx.run_id, ctx.call_id) == (run_id, "r1.1")
    assert ctx.idempotency_key == idempotency_key(run_id, "r1.1")
    assert ctx.logger is activity.logger
    # The activity also heartbeats on its own (no details) while the tool runs.
    assert ("halfway",) in beats
    ToolContext("r", "c", "k").heartbeat("outside an activity: a no-op")


async def test_a_raising_tool_and_an_unusable_result_are_fail_soft_error_results(
    parts: WorkerResources,
) -> None:
    @tool(effect=ToolEffect.READ_ONLY)
    def explode() -> str:
        raise RuntimeError("secret hunter2")

    @tool(effect=ToolEffect.READ_ONLY)
    def opaque() -> object:
        return object()

    acts = ToolActivities(
        registry=ToolRegistry([explode, opaque]),
        steps=ToolStepStore(parts.ctx),
    )
    env = ActivityEnvironment()
    for name, expected in [
        ("explode", GENERIC_TOOL_ERROR),
        ("opaque", "opaque ran, but its result is unusable: the tool returned a object"),
        ("explode_typo", "Unknown tool 'explode_typo'."),
    ]:
        run_id = begin_run(parts)
        outcome = await env.run(acts.execute, tool_request(run_id, name, {}))
        assert outcome.is_error
        [message] = [m for m in RunStore(parts.ctx).transcript(run_id) if m.role == "tool"]
        assert message.is_error and message.content.startswith(expected)
        assert "hunter2" not in message.content


async def test_a_user_write_with_an_unusable_result_is_recorded_and_one_that_raises_is_unknown(
    parts: WorkerResources,
) -> None:
    ran: list[str] = []

    @tool
    def opaque_write(ctx: ToolContext) -> object:
        ran.append(ctx.run_id)
        return object()  # the effect happened; only its result is unusable

    @tool
    def failing_write(ctx: ToolContext) -> str:
        ran.append(ctx.run_id)
        raise RuntimeError("half done")

    assert parts.executor is not None
    acts = WriteActivities(
        ctx=parts.ctx,
        registry=ToolRegistry([opaque_write, failing_write]),
        executor=parts.executor,
    )

    async def write(name: str) -> tuple[str, Any]:
        run_id = begin_run(parts)
        key = idempotency_key(run_id, "r1.1")
        _sql.stamp(
            parts.ctx, FenceRequest(run_id=run_id, call_id="r1.1", tool=name, token="tok"), key
        )
        request = tool_request(run_id, name, {}).model_copy(
            update={"effect": ToolEffect.NON_IDEMPOTENT_WRITE, "fence_token": "tok"}
        )
        try:
            return run_id, await ActivityEnvironment().run(acts.execute, request)
        except ApplicationError as exc:
            return run_id, exc

    run_id, outcome = await write("opaque_write")
    assert outcome.is_error and ran == [run_id]
    [message] = [m for m in RunStore(parts.ctx).transcript(run_id) if m.role == "tool"]
    assert message.content.startswith("opaque_write ran, but its result is unusable")
    run_id, failed = await write("failing_write")
    assert isinstance(failed, ApplicationError) and failed.type == ErrorType.WRITE_FAILED.value
    assert ran[-1] == run_id and len(ran) == 2


def test_a_write_declares_its_attempt_bound_and_only_a_write_may() -> None:
    @tool(attempt_seconds=1)
    def book(amount: int) -> str:
        """Book (not idempotent)."""
        return "booked"

    assert book.attempt_seconds == 1.0
    assert attempt_bound_of(book) == 1.0
    assert attempt_bound_of(tool(name="plain")(lambda: "x")) is None  # none: write_seconds
    for bad in (0, -1, float("nan"), 3601, True, "1"):
        with pytest.raises(ValueError, match="attempt_seconds"):
            tool(name="bad", attempt_seconds=bad)(lambda: "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only a non-idempotent write"):
        tool(name="read", effect=ToolEffect.READ_ONLY, attempt_seconds=1)(lambda: "x")


def test_a_tool_class_with_a_bad_attempt_bound_is_a_config_error_at_start() -> None:
    odd = tool(name="odd")(lambda: "x")
    odd.attempt_seconds = 7200.0  # as a tool class's attribute would say, unchecked
    with pytest.raises(ConfigError, match="attempt_seconds"):
        ToolRegistry([odd])
