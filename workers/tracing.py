"""Spans around model calls and tool calls, as wrappers of the ports the worker injects.

They run inside the activity's span (the Temporal TracingInterceptor's RunActivity), so
they join the run's trace. Attributes are ids, names and counts only: never a prompt, an
argument or a result (tests/workers/test_tracing.py asserts it)."""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue
from temporalio import activity

from agentrt.activities.ports import Emit, ModelProvider, StreamingProvider, ToolContext, streams
from agentrt.contracts.messages import ProviderReply, ProviderRequest
from agentrt.core.tracing import TRACER, tracing_enabled
from agentrt.workers.wrapped import WrappedTool


def _run_id() -> str:
    """The agent run's uuid is its workflow id."""
    return (activity.info().workflow_id or "") if activity.in_activity() else ""


class TracedProvider:
    def __init__(self, name: str, inner: ModelProvider) -> None:
        self._name, self._inner = name, inner

    @property
    def streaming(self) -> bool:
        return streams(self._inner)

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        return await self._traced(request, self._inner.complete)

    async def stream(self, request: ProviderRequest, emit: Emit) -> ProviderReply:
        inner = cast(StreamingProvider, self._inner)
        return await self._traced(request, lambda r: inner.stream(r, emit))

    async def _traced(
        self, request: ProviderRequest, call: Callable[[ProviderRequest], Awaitable[ProviderReply]]
    ) -> ProviderReply:
        if not tracing_enabled():  # no provider: the span would be a no-op (see below)
            return await call(request)
        tracer = trace.get_tracer(TRACER)
        attributes: dict[str, AttributeValue] = {
            "agentrt.run_id": _run_id(),
            "gen_ai.system": self._name,
            "gen_ai.request.model": request.model,
            "agentrt.round": request.round,
            "agentrt.tools_offered": len(request.tools or []),
        }
        with tracer.start_as_current_span(
            f"model {self._name}", kind=SpanKind.CLIENT, attributes=attributes,
            record_exception=False, set_status_on_exception=False,
        ) as span:  # fmt: skip
            try:
                reply = await call(request)
            except Exception as exc:
                # The type only: a provider's message may quote the prompt.
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                raise
            span.set_attributes(
                {
                    "gen_ai.usage.input_tokens": reply.usage.prompt_tokens,
                    "gen_ai.usage.output_tokens": reply.usage.completion_tokens,
                    "gen_ai.response.finish_reasons": [reply.finish_reason],
                    "agentrt.tool_calls": len(reply.tool_calls),
                }
            )
            return reply


class TracedTool(WrappedTool):
    """A tool with a span around each call; everything else is the tool's own."""

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        # Without a tracer provider every span is a no-op, yet building one (its attributes,
        # the context it attaches) cost about 1% of a run's worker CPU (bench/HISTORY.md
        # set 10). Asked per call: an embedding application may install one later.
        if not tracing_enabled():
            return await self._inner(arguments, ctx)
        tracer = trace.get_tracer(TRACER)
        name = self._inner.spec.name
        attributes: dict[str, AttributeValue] = {
            "agentrt.run_id": ctx.run_id,
            "agentrt.tool": name,
            "agentrt.tool.effect": self._inner.effect.value,
            "agentrt.call_id": ctx.call_id,
        }
        with tracer.start_as_current_span(
            f"tool {name}", kind=SpanKind.INTERNAL, attributes=attributes,
            record_exception=False, set_status_on_exception=False,
        ) as span:  # fmt: skip
            try:
                content = await self._inner(arguments, ctx)
            except Exception as exc:
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                span.set_attribute("agentrt.tool.error", type(exc).__name__)
                raise
            span.set_attribute("agentrt.tool.result_chars", len(content))
            return content


def traced_providers(providers: Mapping[str, ModelProvider]) -> dict[str, ModelProvider]:
    return {name: TracedProvider(name, p) for name, p in providers.items()}
