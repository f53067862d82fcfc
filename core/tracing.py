"""OpenTelemetry tracing: the Temporal interceptor on every client (and so every worker),
and an OTLP/HTTP exporter when AGENTRT_OTLP_ENDPOINT is set. Unset, no tracer provider is
installed: the API's no-op tracer records nothing and nothing is exported.

Spans carry ids, names and counts only (run id, tool, effect, provider, model, tokens),
never prompts, arguments or results."""

import logging

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from temporalio.contrib.opentelemetry import TracingInterceptor

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings

TRACER = "agentrt"
logger = logging.getLogger("agentrt.tracing")


def tracing_interceptor() -> TracingInterceptor:
    """Creates spans through the global tracer provider (a no-op until one is set)."""
    return TracingInterceptor()


def configure_tracing(settings: Settings, service: str) -> TracerProvider | None:
    """For entry points: install a tracer provider exporting over OTLP/HTTP, once, when
    AGENTRT_OTLP_ENDPOINT is set (http(s)://host:port, the collector's base URL)."""
    endpoint = settings.otlp_endpoint.strip().rstrip("/")
    if not endpoint:
        return None
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(
            f"AGENTRT_OTLP_ENDPOINT: {endpoint!r} is not an http(s):// URL of an OTLP/HTTP "
            "collector (e.g. http://127.0.0.1:4318)"
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    logger.info("traces exported to %s", endpoint)
    return provider


def shutdown_tracing(provider: TracerProvider | None) -> None:
    """Flush what is buffered (the batch processor) before the process exits."""
    if provider is not None:
        provider.shutdown()


__all__ = ["TRACER", "configure_tracing", "shutdown_tracing", "tracing_interceptor"]
