"""One trace from start to completion: client, workflow and activities, with spans around
model and tool calls that carry ids, names and counts, never content."""

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.core.tracing import configure_tracing
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import make_worker, worker_interceptors
from agentrt.workers.compose import WorkerResources
from agentrt.workers.metrics import ActivityTiming
from agentrt.workers.pool import BlockingPool

REFUND = "Please refund order 1042"
# What the run's prompt, tool arguments and results say: none of it may be on a span.
CONTENT = ["Please refund", "customer request", "4999", "49.99", "delivered", "refunded"]


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # later tests' spans go nowhere


def _values(span: ReadableSpan) -> list[str]:
    values = [span.name, *(str(v) for v in (span.attributes or {}).values())]
    for event in span.events:
        values += [event.name, *(str(v) for v in (event.attributes or {}).values())]
    if span.status.description:
        values.append(span.status.description)
    return values


async def test_one_trace_covers_a_run_from_start_to_completion(
    spans: InMemorySpanExporter,
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    parts: WorkerResources,
    task_queue: str,
) -> None:
    address = temporal_env.client.service_client.config.target_host
    own = settings.replace(temporal={"address": address, "task_queue": task_queue})
    client = await connect(own)  # the one factory: it brings the tracing interceptor
    # The worker takes the client's interceptor and adds no second one (no doubled spans).
    assert not any(isinstance(i, TracingInterceptor) for i in worker_interceptors(client, parts))
    runtime = AgentRuntime(client, RunStore(parts.ctx), task_queue)
    spans.clear()
    async with make_worker(client, parts, own):
        view = await runtime.result(await runtime.start("auto", REFUND))
    assert view.status is RunStatus.COMPLETED
    run_id = view.run_id

    finished = spans.get_finished_spans()
    starts = [
        s
        for s in finished
        # `start` is an Update-with-Start: its client span starts the trace.
        if s.name.startswith(("StartWorkflow:", "StartUpdateWithStartWorkflow:"))
        and (s.attributes or {}).get("temporalWorkflowID") == run_id
    ]
    assert len(starts) == 1, [s.name for s in finished]
    trace_id = starts[0].context.trace_id
    ours = [s for s in finished if s.context.trace_id == trace_id]
    names = [s.name for s in ours]
    # Client → workflow → every activity, down to the settle (made inside the answer's
    # model.complete): one trace.
    assert any(n.startswith("RunWorkflow:") for n in names), names
    for act in ("run.begin", "model.complete", "tool.execute", "write.execute"):
        assert f"RunActivity:{act}" in names, (act, names)
    # Activities the workflow scheduled are children of its spans, not new roots.
    roots = [s for s in ours if s.parent is None]
    assert roots == starts

    models = [s for s in ours if s.name == "model scripted"]
    assert len(models) == 3  # lookup, refund, answer
    for m in models:
        attrs = dict(m.attributes or {})
        assert attrs["agentrt.run_id"] == run_id
        assert attrs["gen_ai.system"] == "scripted" and attrs["gen_ai.request.model"] == "demo"
        assert int(str(attrs["gen_ai.usage.input_tokens"])) > 0
        assert int(str(attrs["gen_ai.usage.output_tokens"])) > 0
    assert sum(int(str((m.attributes or {})["gen_ai.usage.input_tokens"])) for m in models) == (
        view.prompt_tokens
    )
    tools = {s.name: dict(s.attributes or {}) for s in ours if s.name.startswith("tool ")}
    assert set(tools) == {"tool lookup_order", "tool issue_refund"}
    assert tools["tool issue_refund"]["agentrt.tool.effect"] == "NON_IDEMPOTENT_WRITE"
    assert tools["tool lookup_order"]["agentrt.tool.effect"] == "READ_ONLY"
    assert all(t["agentrt.run_id"] == run_id for t in tools.values())

    # No prompt, argument or result anywhere in the trace.
    for s in ours:
        for v in _values(s):
            assert not any(c in v for c in CONTENT), (s.name, v)


def test_nothing_is_exported_unless_an_endpoint_is_set(settings: Settings) -> None:
    assert configure_tracing(settings.replace(telemetry={"otlp_endpoint": ""}), "t") is None
    with pytest.raises(ConfigError, match="AGENTRT_OTLP_ENDPOINT"):
        configure_tracing(settings.replace(telemetry={"otlp_endpoint": "collector:4318"}), "t")


async def test_without_a_tracer_provider_no_tracing_interceptor_runs(
    monkeypatch: pytest.MonkeyPatch,
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    parts: WorkerResources,
) -> None:
    """Unconfigured tracing records nothing, so neither the client nor the worker carries
    the interceptor (it cost a third more CPU per run for no span at all)."""
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    address = temporal_env.client.service_client.config.target_host
    client = await connect(settings.replace(temporal={"address": address}))
    assert client.config()["interceptors"] == []
    kinds = [type(i) for i in worker_interceptors(client, parts)]
    assert kinds == [ActivityTiming, BlockingPool]  # activity timing and the store pool alone


async def test_without_a_tracer_provider_the_call_wrappers_build_no_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The model and tool wrappers skip the span (its attributes, its context) when no
    provider is set, and still build one when one is: asked on every call."""
    from agentrt.activities.ports import ToolContext
    from agentrt.activities.toolbox.decorator import tool
    from agentrt.contracts.messages import Message, ProviderReply, ProviderRequest
    from agentrt.workers.tracing import TracedProvider, TracedTool

    started: list[str] = []

    class Counting(trace.NoOpTracer):
        def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Any:
            started.append(name)
            return super().start_as_current_span(name)

    class Fixed:  # a provider that answers at once
        async def complete(self, request: ProviderRequest) -> ProviderReply:
            return ProviderReply(content="ok")

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    monkeypatch.setattr(trace, "get_tracer", lambda *_a, **_k: Counting())
    wrapped, model = TracedTool(echo), TracedProvider("fixed", Fixed())
    request = ProviderRequest(model="m", messages=[Message(role="user", content="hi")], round=1)
    ctx = ToolContext("run", "r1.1", "key")
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    assert await wrapped({"text": "hello"}, ctx) == "hello"
    await model.complete(request)
    assert started == []
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)
    assert await wrapped({"text": "hello"}, ctx) == "hello"
    await model.complete(request)
    assert started == ["tool echo", "model fixed"]
