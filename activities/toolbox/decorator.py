"""`@tool`: a typed function, sync or async, becomes a Tool.

The argument schema is a pydantic model built from the signature (defaults, `Annotated`
and `Field` constraints are kept), the description is the docstring and the name is the
function's. A parameter annotated `ToolContext` is injected and is not in the schema. No
declared effect means NON_IDEMPOTENT_WRITE: fenced and approval-bound (fail closed).

What a tool returns reaches the model as text: a `str` as it is, anything else that
pydantic can turn into JSON (numbers, lists, dicts, models, dataclasses, None...) as JSON,
and anything else is a ToolResultError, an error result (the effect, if any, happened).

`@tool(reconcile=probe)` gives a write a reconcile probe: `probe(key, arguments)`, sync or
async, asks the target system what became of the call with that idempotency key and those
arguments (a dict, as the model sent them) and returns a `Reconciled`.

`@tool(attempt_seconds=1.0)` declares a write's own bound on one attempt: the attempt is
cut there (an async function's call is cancelled; a sync one must itself return by then,
e.g. by its client's timeout), and an interrupted attempt's probe is asked once the bound
has passed, not after the profile's `write_seconds` (activities/ports.attempt_bound_of).
"""

import asyncio
import contextvars
import copy
import functools
import inspect
import json
import re
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, overload

from pydantic import BaseModel, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentrt.activities.ports import ToolContext, ToolResultError
from agentrt.activities.toolbox.base import TypedTool
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.plan import checked_attempt_seconds
from agentrt.contracts.reconcile import Reconciled

# A `@tool` probe: (idempotency key, arguments) -> Reconciled, sync or async.
ProbeFunction = Callable[[str, dict[str, Any]], Any]

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_REFUSED_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}


class FunctionTool(TypedTool[BaseModel]):
    """A Tool made by `@tool`. `fn` is the undecorated function, for direct calls in tests."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        effect: ToolEffect | None,
        reconcile: ProbeFunction | None = None,
        attempt_seconds: float | None = None,
    ) -> None:
        if not NAME.match(name):
            raise ValueError(f"tool name {name!r} must match {NAME.pattern}")
        if reconcile is not None and not callable(reconcile):
            raise TypeError(f"tool {name!r}: reconcile must be a function (key, arguments)")
        self.attempt_seconds = checked_attempt_seconds(attempt_seconds, name)
        declared = ToolEffect.resolve(effect.value if effect is not None else None)
        if self.attempt_seconds is not None and declared is not ToolEffect.NON_IDEMPOTENT_WRITE:
            raise ValueError(f"tool {name!r}: only a non-idempotent write takes attempt_seconds")
        self.fn = fn
        self.name = name
        self.description = description
        self.declared_effect = effect
        self.args_model, self._context_param = _signature_model(fn, name)
        self._is_async = inspect.iscoroutinefunction(fn)
        self._executor: Executor | None = None  # None: the loop's default (outside a worker)
        self._probe = reconcile
        self.reconcile = self._reconciled if reconcile is not None else None

    def on_executor(self, executor: Executor) -> "FunctionTool":
        """This tool with its sync calls on `executor` (the worker's tool pool)."""
        bound = copy.copy(self)
        bound._executor = executor
        bound.reconcile = bound._reconciled if self._probe is not None else None
        return bound

    async def _reconciled(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        """The probe, called as the runtime calls probes (activities/ports.Probe)."""
        probe = self._probe
        assert probe is not None
        if inspect.iscoroutinefunction(probe):
            answer = await probe(ctx.idempotency_key, arguments)
        else:
            call = functools.partial(
                contextvars.copy_context().run, probe, ctx.idempotency_key, arguments
            )
            answer = await asyncio.get_running_loop().run_in_executor(self._executor, call)
        if not isinstance(answer, Reconciled):
            raise TypeError(f"the probe of {self.name!r} returned a {type(answer).__name__}")
        return answer

    def _probe_shown(self) -> object:
        return self._probe  # the author's function, not the adapter around it

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        """Call the function with the validated arguments (and the context, if it asks)."""
        kwargs = {name: getattr(args, name) for name in type(args).model_fields}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        if self._is_async:
            value = await self.fn(**kwargs)
        else:
            # The activity's context goes with the call, as asyncio.to_thread does.
            call = functools.partial(contextvars.copy_context().run, self.fn, **kwargs)
            value = await asyncio.get_running_loop().run_in_executor(self._executor, call)
        return as_text(value)

    def __repr__(self) -> str:
        return f"<tool {self.name} ({self.effect.value})>"


def as_text(value: Any) -> str:
    """A tool's return value as the model reads it: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(to_jsonable_python(value), allow_nan=False)
    except (PydanticSerializationError, TypeError, ValueError):
        raise ToolResultError(
            f"the tool returned a {type(value).__name__}, which is neither text nor JSON"
        ) from None


def _signature_model(fn: Callable[..., Any], name: str) -> tuple[type[BaseModel], str | None]:
    hints = inspect.get_annotations(fn, eval_str=True)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in _REFUSED_KINDS:
            raise TypeError(
                f"tool {name!r}: parameter {param.name!r} is {_REFUSED_KINDS[param.kind]};"
                " tool parameters are passed by name"
            )
        hint = hints.get(param.name, inspect.Parameter.empty)
        if hint is ToolContext:
            context_param = param.name
            continue
        if hint is inspect.Parameter.empty:
            raise TypeError(f"tool {name!r}: parameter {param.name!r} has no type annotation")
        fields[param.name] = (
            hint,
            ... if param.default is inspect.Parameter.empty else param.default,
        )
    model: type[BaseModel] = create_model(f"{name}_arguments", **fields)
    return model, context_param


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    effect: ToolEffect | None = None,
    name: str | None = None,
    description: str | None = None,
    reconcile: ProbeFunction | None = None,
    attempt_seconds: float | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    effect: ToolEffect | None = None,
    name: str | None = None,
    description: str | None = None,
    reconcile: ProbeFunction | None = None,
    attempt_seconds: float | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """`@tool` or `@tool(effect=ToolEffect.READ_ONLY, name=..., description=...)`, and for a
    write `reconcile=probe` and `attempt_seconds=` (see the module's docstring)."""

    def make(f: Callable[..., Any]) -> FunctionTool:
        tool_name = name or f.__name__
        text = description or inspect.getdoc(f) or tool_name
        return FunctionTool(f, name=tool_name, description=text, effect=effect,
                            reconcile=reconcile, attempt_seconds=attempt_seconds)  # fmt: skip

    return make if fn is None else make(fn)
