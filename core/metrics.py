"""Prometheus endpoints: ours (prometheus-client) and the Temporal SDK's own exporter.

Two ports, not a bridge: the SDK's Rust core serves its metrics (`temporal_*`, with the
SDK's own buckets and labels) itself, on AGENTRT_TEMPORAL_METRICS_PORT; our `/metrics`
(`agentrt_*`, plus process and Python metrics) is on AGENTRT_METRICS_PORT. Scrape both.
A port already taken is a ConfigError at start, never a silent fallback.
"""

import contextlib
import logging
import threading
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from agentrt.contracts.errors import ConfigError
from agentrt.core.read_gauges import ReadGauge, StoreReads, store_gauges, waiting_gauge
from agentrt.core.settings import Settings

logger = logging.getLogger("agentrt.metrics")


def new_registry() -> CollectorRegistry:
    """A registry of our own (not the global one), with the process and GC collectors."""
    from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR

    registry = CollectorRegistry()
    for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(collector)
    return registry


@contextlib.contextmanager
def serve_metrics(settings: Settings, registry: CollectorRegistry) -> Iterator[int | None]:
    """Serve `registry` on AGENTRT_METRICS_HOST:AGENTRT_METRICS_PORT for the duration; yields
    the bound port (port 0: the one the system chose), None when metrics are off."""
    if settings.telemetry.metrics_port is None:
        yield None
        return
    host, port = settings.telemetry.metrics_host, settings.telemetry.metrics_port
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise ConfigError(
            f"AGENTRT_METRICS_PORT: cannot serve metrics on {host}:{port} "
            f"({exc.strerror or exc}); choose a free port, or unset it to turn metrics off"
        ) from None
    bound = int(server.server_port)
    logger.info("metrics on http://%s:%d/metrics", host, bound)
    try:
        yield bound
    finally:
        _stop(server, thread)


def _stop(server: WSGIServer, thread: threading.Thread) -> None:
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


_RUNTIMES: dict[str, Runtime] = {}


def temporal_runtime(settings: Settings) -> Runtime | None:
    """A Temporal Runtime whose Prometheus exporter listens on
    AGENTRT_TEMPORAL_METRICS_PORT (None when it is not set), for a client to connect with:
    every worker on that client reports there. One per address in a process (its
    exporter holds the port)."""
    address = _sdk_metrics_address(settings)
    if address is None:
        return None
    if address not in _RUNTIMES:
        _RUNTIMES[address] = _exporting_runtime(address)
        logger.info("Temporal SDK metrics on http://%s/metrics", address)
    return _RUNTIMES[address]


def install_sdk_metrics(settings: Settings) -> Runtime | None:
    """Make the default Temporal Runtime one whose Prometheus exporter listens on
    AGENTRT_TEMPORAL_METRICS_PORT, before any client connects (every client and worker of
    the process then reports there). Once per process; None when the port is not set."""
    address = _sdk_metrics_address(settings)
    if address is None:
        return None
    runtime = _exporting_runtime(address)
    Runtime.set_default(runtime, error_if_already_set=True)
    logger.info("Temporal SDK metrics on http://%s/metrics", address)
    return runtime


def _sdk_metrics_address(settings: Settings) -> str | None:
    if settings.telemetry.temporal_metrics_port is None:
        return None
    return f"{settings.telemetry.metrics_host}:{settings.telemetry.temporal_metrics_port}"


def _exporting_runtime(address: str) -> Runtime:
    """A Runtime whose Prometheus exporter listens on `address`; a port the SDK cannot
    take is a ConfigError that says so."""
    try:
        return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(address)))
    except ValueError as exc:
        raise ConfigError(
            f"AGENTRT_TEMPORAL_METRICS_PORT: the Temporal SDK cannot serve metrics on "
            f"{address} ({str(exc).splitlines()[0]}); choose a free port, or unset it"
        ) from None


__all__ = [
    "ReadGauge",
    "StoreReads",
    "install_sdk_metrics",
    "new_registry",
    "serve_metrics",
    "store_gauges",
    "temporal_runtime",
    "waiting_gauge",
]
