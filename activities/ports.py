"""What the activities need from the outside world, as Protocols: model providers, tools, and
the Temporal side of retention. The store is no port: each unit holds its own SQL."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentrt.contracts.budget import Allowance
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.messages import (
    ProviderReply,
    ProviderRequest,
    ToolSpec,
)
from agentrt.contracts.reconcile import Reconciled
from agentrt.contracts.run import ToolReply


class ModelProvider(Protocol):
    """A model provider: one request in, one reply out, called by the model activity."""

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """The model's reply to the request: its text, its tool calls, and its usage."""
        ...


# Called with each piece of the reply's text as the provider receives it.
Emit = Callable[[str], Awaitable[None]]


class StreamingProvider(ModelProvider, Protocol):
    """A provider that may also stream (optional): `stream` calls `emit` with the reply's
    text as it comes and returns the finished reply, the same `complete` would. Only the
    finished reply is stored and returned to the workflow; the pieces are live output."""

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        """The reply, as `complete` gives it, after `emit` was called with each piece."""
        ...


def streams(provider: object) -> bool:
    """Whether `provider` streams: it has `stream`, and does not say `streaming = False`
    (a wrapper, or the scripted model without a pace)."""
    return callable(getattr(provider, "stream", None)) and getattr(provider, "streaming", True)


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
    # A continued write: the operator's answer to the question the call asked (ToolNeedsInput).
    reply: ToolReply | None = None
    # The call's live output, where its activity has one (a write at privacy full or
    # redacted): a tool that streams (a remote agent's task) hands it its text as it comes.
    emit: Emit | None = field(default=None, compare=False)


class ToolNeedsInput(Exception):
    """Raised by a non-idempotent write whose target waits for the operator (a remote
    agent's `input-required`): nothing is recorded, the run waits for input with
    `question` shown, and the answer comes back in `ctx.reply` to a new attempt of the same
    call (its same idempotency key). `task_id`: where the answer goes, `turn`: the
    call's turn that asked. A call that is not a fenced write cannot pause: it ends with
    the question as its error result."""

    def __init__(self, question: str, *, task_id: str = "", turn: int = 0) -> None:
        super().__init__(question)
        self.question, self.task_id, self.turn = question, task_id, turn


class ToolInputError(Exception):
    """The arguments are invalid; the message is safe to show to the model. Nothing ran."""


class ToolNotApplied(Exception):
    """Raise it from a tool when you KNOW nothing changed (the target refused the call, or
    it was never sent). The message is shown to the model as the call's error result; a
    write's fence is cleared and the run goes on. Anything else raised by a
    non-idempotent write after its claim leaves its outcome unknown."""


class ToolFailedAfterApplying(Exception):
    """Raise it from a tool when its effect DID happen but the call failed afterwards (the
    payment went through, its receipt could not be read). The message is shown to the
    model as an error result saying the effect happened; a write's fence is cleared and
    the step is recorded, so nothing repeats it."""


class ToolFailure(ToolNotApplied):
    """A failure whose outcome is known to be "not applied", raised by the runtime's own
    tools (MCP): nothing was sent (the tool's server could not be reached), or the server
    answered with an error that its servers-file entry says means nothing changed.

    `reason` is a short code that is safe to log (the message may echo what the server said).
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ToolResultError(Exception):
    """The tool ran but returned what cannot be given to the model (neither text nor JSON).
    The message is safe to show to the model; the effect, if any, has happened."""


class Tool(Protocol):
    """What the runtime calls a tool: a spec for the model, an effect, and the call."""

    @property
    def spec(self) -> ToolSpec:
        """The name, description and argument schema the model is offered."""
        ...

    @property
    def effect(self) -> ToolEffect:
        """What a call does to the world, which decides how the runtime guards it."""
        ...

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        """Run the call with the model's arguments; its result, as the model will see it."""
        ...


class Probe(Protocol):
    """A write's reconcile probe: asks the target system what became of the call with
    `ctx.idempotency_key` and these arguments. A tool offers one as its `reconcile`
    attribute (None: no probe). It must only read; it may raise while the target cannot
    be asked (the activity retries it)."""

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        """What became of the call: applied (with its result), not applied, or unknown."""
        ...


class Withdraw(Protocol):
    """A write's way to tell its target to stop waiting for the operator's answer (the
    run that asked was cancelled): the remote task `task_id` of the call in `ctx`. A tool
    offers one as its `withdraw` attribute. It may raise while the target cannot be
    reached (the activity retries a few times; the cancel goes on whatever it answers)."""

    async def __call__(self, task_id: str, ctx: ToolContext) -> None:
        """Tell the target; a task that has already ended stays as it is."""
        ...


def withdraw_of(tool: object) -> Withdraw | None:
    """The tool's withdraw, if it has one."""
    found = getattr(tool, "withdraw", None)
    return found if callable(found) else None


def probe_of(tool: object) -> Probe | None:
    """The tool's reconcile probe, if it has one."""
    found = getattr(tool, "reconcile", None)
    return found if callable(found) else None


def attempt_bound_of(tool: object) -> float | None:
    """The tool's own bound on one attempt of a write, in seconds, if it declares one (its
    `attempt_seconds` attribute: `@tool(attempt_seconds=...)`, an MCP servers-file entry).
    Declaring one promises that an attempt has no effect past it: the write activity cuts
    an async call there, and a sync tool must itself return by then (its client's
    timeout). An interrupted write's probe is asked once the bound has passed."""
    found = getattr(tool, "attempt_seconds", None)
    if isinstance(found, bool) or not isinstance(found, int | float) or not found > 0:
        return None
    return float(found)


def reserve_of(tool: object) -> Allowance | None:
    """The worst case of one call the tool declares (its `reserve` attribute: a remote
    agent's skill), reserved from a budgeted run's room before the call; None: none."""
    found = getattr(tool, "reserve", None)
    return found if isinstance(found, Allowance) else None


FaultHook = Callable[[str], None]


def no_faults(_point: str) -> None:
    """Production fault hook: does nothing."""


class ExecutionPort(Protocol):
    """The Temporal side of the retention pass: the worker injects one over its client."""

    async def cancel(self, workflow_id: str, *, by: str, reason: str) -> None:
        """Cancel the run's workflow, naming who asked and why."""
        ...

    async def delete(self, workflow_id: str) -> None:
        """Delete the workflow's execution and its history from Temporal."""
        ...
