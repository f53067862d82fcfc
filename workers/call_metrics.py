"""Per-provider and per-tool call metrics, as wrappers of the ports the worker injects
(beside the tracing wrappers of workers/tracing.py). A label is a name from the worker's
configuration: the provider a profile names and the worker loaded, a toolbox, a tool
registered in it. Nothing a model or a prompt chose becomes a label: a model that asks
for an unknown tool never reaches a wrapper (there is none for that name), and an error's
message is never read, only that there was one."""

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

from prometheus_client import Counter, Histogram

from agentrt.activities.ports import (
    Emit,
    ModelProvider,
    StreamingProvider,
    Tool,
    ToolContext,
    probe_of,
    streams,
)
from agentrt.contracts.messages import ProviderReply, ProviderRequest
from agentrt.contracts.reconcile import Reconciled
from agentrt.workers.metrics import CallMetrics
from agentrt.workers.wrapped import WrappedTool

T = TypeVar("T")


class CallTally:
    """A call counted and timed by its result (ok, error) under fixed labels; the labelled
    children are made once per result: `labels()` validates and locks on every call."""

    def __init__(self, calls: Counter, seconds: Histogram, **labels: str) -> None:
        self._calls, self._seconds, self._labels = calls, seconds, labels
        self._children: dict[str, tuple[Any, Any]] = {}  # result -> (count, time)

    async def timed(self, call: Awaitable[T]) -> T:
        started, result = time.monotonic(), "error"
        try:
            found = await call
            result = "ok"
            return found
        finally:
            count, took = self._children.get(result) or self._child(result)
            count.inc()
            took.observe(time.monotonic() - started)

    def _child(self, result: str) -> tuple[Any, Any]:
        labels = {**self._labels, "result": result}
        child = self._calls.labels(**labels), self._seconds.labels(**labels)
        self._children[result] = child
        return child


class MeteredProvider:
    def __init__(self, name: str, inner: ModelProvider, metrics: CallMetrics) -> None:
        self._inner = inner
        self._tally = CallTally(metrics.model_calls, metrics.model_seconds, provider=name)

    @property
    def streaming(self) -> bool:
        return streams(self._inner)

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        return await self._tally.timed(self._inner.complete(request))

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        stream = cast(StreamingProvider, self._inner).stream(request, emit)
        return await self._tally.timed(stream)


def metered_providers(
    providers: Mapping[str, ModelProvider], metrics: CallMetrics
) -> dict[str, ModelProvider]:
    return {name: MeteredProvider(name, p, metrics) for name, p in providers.items()}


def fallback_counter(metrics: CallMetrics, served: Iterable[str]) -> Callable[[str, str], None]:
    """What the model activity calls when a call fails over from one `provider:model` to
    another. Counts provider names only, and only those the worker serves."""
    known = frozenset(served)

    def name(ref: str) -> str:
        provider = ref.partition(":")[0]
        return provider if provider in known else "unknown"

    def failed_over(failed: str, fallback: str) -> None:
        metrics.fallbacks.labels(provider=name(failed), fallback_provider=name(fallback)).inc()

    return failed_over


class MeteredTool(WrappedTool):
    """A tool with its calls counted and timed; everything else is the tool's own. Its
    reconcile probe, when it has one, is counted by verdict."""

    def __init__(self, box: str, inner: Tool, metrics: CallMetrics) -> None:
        super().__init__(inner)
        self._box, self._metrics = box, metrics
        tool = inner.spec.name
        self._tally = CallTally(metrics.tool_calls, metrics.tool_seconds, toolbox=box, tool=tool)
        probe = probe_of(inner)
        self.reconcile = None if probe is None else self._probe

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return await self._tally.timed(self._inner(arguments, ctx))

    async def _probe(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        probe = probe_of(self._inner)
        assert probe is not None
        verdict = "error"  # the probe raised: the target could not be asked (retried)
        try:
            answer = await probe(arguments, ctx)
            verdict = answer.verdict
            return answer
        finally:
            labels = {"toolbox": self._box, "tool": self._inner.spec.name}
            self._metrics.probe_calls.labels(**labels, verdict=verdict).inc()
