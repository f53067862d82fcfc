"""What the activities need from the outside world, as Protocols: model providers, tools, and
the Temporal side of retention. The store is no port: each unit holds its own SQL."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.messages import (
    ProviderReply,
    ProviderRequest,
    ToolSpec,
)


class ModelProvider(Protocol):
    async def complete(self, request: ProviderRequest) -> ProviderReply: ...


def no_heartbeat(*_details: Any) -> None:
    """Heartbeat outside an activity: nothing to tell."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know of its call. The activity builds it; a `@tool` function receives
    it by declaring a parameter of this type. `heartbeat` is safe from any thread and
    outside an activity; `logger` is the activity's logger (run and attempt in each line)."""

    run_id: str
    call_id: str
    idempotency_key: str
    heartbeat: Callable[..., None] = no_heartbeat
    logger: logging.Logger | logging.LoggerAdapter[Any] = field(
        default=logging.getLogger("agentrt.tools"), compare=False
    )


class ToolInputError(Exception):
    """The arguments are invalid; the message is safe to show to the model. Nothing ran."""


class ToolFailure(Exception):
    """A failure whose outcome is KNOWN, with a message safe to show to the model: either
    nothing was sent (the tool's server could not be reached), or the tool's server answered
    that the call failed. A write raising it is recorded as an error result, not left with an
    unknown outcome. Anything else raised after a write was sent must be a plain exception:
    the fence then marks the outcome unknown.

    `reason` is a short code that is safe to log (the message may echo what the server said).
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ToolResultError(Exception):
    """The tool ran but returned what cannot be given to the model (neither text nor JSON).
    The message is safe to show to the model; the effect, if any, has happened."""


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    @property
    def effect(self) -> ToolEffect: ...

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str: ...


FaultHook = Callable[[str], None]


def no_faults(_point: str) -> None:
    """Production fault hook: does nothing."""


class ExecutionPort(Protocol):
    """The Temporal side of the retention pass: the worker injects one over its client."""

    async def cancel(self, workflow_id: str, *, by: str, reason: str) -> None: ...
    async def delete(self, workflow_id: str) -> None: ...
