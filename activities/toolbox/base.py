"""A typed tool: a pydantic argument model gives the JSON schema and the validation."""

from abc import ABC, abstractmethod
from functools import cached_property
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from agentrt.activities.ports import Probe, ToolContext, ToolInputError
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.messages import ToolSpec

A = TypeVar("A", bound=BaseModel)


def validated(model: type[A], arguments: dict[str, Any]) -> A:
    """The arguments as `model`, or ToolInputError (safe to show the model) before anything runs."""
    # Unknown keys are refused, not ignored: a write must not run on arguments the
    # model garbled (the HTTP provider marks unparseable JSON with such a key).
    unexpected = sorted(set(arguments) - set(model.model_fields))
    if unexpected:
        raise ToolInputError(f"unexpected argument(s): {', '.join(unexpected)}")
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        raise ToolInputError(problems) from None


def probe_name(probe: object) -> str | None:
    """How a tool listing names a probe: its qualified name."""
    if probe is None:
        return None
    return str(getattr(probe, "__qualname__", None) or type(probe).__qualname__)


class TypedTool(ABC, Generic[A]):
    name: str
    description: str
    args_model: type[A]
    declared_effect: ToolEffect | None = None  # None ⇒ NON_IDEMPOTENT_WRITE (fail closed)
    # The write's reconcile probe (activities/ports.Probe); None: an interrupted write of
    # this tool ends its run with the outcome unknown.
    reconcile: Probe | None = None
    # A write's own bound on one attempt, in seconds (activities/ports.attempt_bound_of);
    # None: the profile's write_seconds.
    attempt_seconds: float | None = None

    @cached_property
    def spec(self) -> ToolSpec:
        # Once per tool: a JSON schema costs more than many a tool call (every call and
        # every run's begin read it).
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.args_model.model_json_schema(),
            reconcile=probe_name(self._probe_shown()),
        )

    def _probe_shown(self) -> object:
        """What the spec names as this tool's probe."""
        return self.reconcile

    @property
    def effect(self) -> ToolEffect:
        return ToolEffect.resolve(self.declared_effect.value if self.declared_effect else None)

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return await self.run(validated(self.args_model, arguments), ctx)

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> str: ...
