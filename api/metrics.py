"""The web process's /metrics: its HTTP requests by method, route template and status
(api/request_metrics.py), the store gauges the workers serve too (runs waiting, the oldest
wait, whether the store answers), the push dead letters (counted in the store: right after
a restart, and the same on every API process), and the process collectors. The Temporal SDK's
metrics of its client are on AGENTRT_TEMPORAL_METRICS_PORT (core/metrics.py)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from agentrt.api.request_metrics import RequestMetrics, instrument
from agentrt.core.metrics import new_registry
from agentrt.store.a2a.push import count_dead
from agentrt.store.context import StoreContext
from agentrt.store.gauges import watch_store


@dataclass
class ApiMetrics:
    registry: CollectorRegistry = field(default_factory=new_registry)
    requests: RequestMetrics = field(init=False)

    def __post_init__(self) -> None:
        self.requests = RequestMetrics(self.registry)

    def instrument(self, app: Any) -> None:
        """Measure every request to the app (before it starts): api/request_metrics.py."""
        instrument(app, self.requests)

    def watch(self, ctx: StoreContext) -> None:
        """Count in this store (known once the app has opened it)."""
        watch_store(self.registry, ctx)
        self.registry.register(_DeadLetters(lambda: count_dead(ctx)))


class _DeadLetters(Collector):
    """agentrt_push_dead_letters_total: push deliveries given up. Read from the store, so it
    falls only when tasks are purged (a counter reset, to Prometheus)."""

    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count

    def collect(self) -> Iterable[CounterMetricFamily]:
        try:
            value = float(self._count())
        except Exception:
            return []  # the store is away: no sample, the rest of the scrape stands
        doc = "Push deliveries given up (bounded retries spent, or the target refused)."
        return [CounterMetricFamily("agentrt_push_dead_letters", doc, value=value)]


def api_registry() -> ApiMetrics:
    return ApiMetrics()
