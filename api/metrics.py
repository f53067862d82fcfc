"""The A2A server's /metrics: the runs waiting for approval, counted in the store at each
scrape (the same gauge the workers serve), the push dead letters (also counted in the
store: right after a restart, and the same on every API process), and the process
collectors. The Temporal SDK's
metrics of its client are on AGENTRT_TEMPORAL_METRICS_PORT (core/metrics.py)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from agentrt.contracts.enums import RunStatus
from agentrt.core.metrics import new_registry, reconciliation_gauge, waiting_gauge
from agentrt.store.a2a.push import count_dead
from agentrt.store.context import StoreContext
from agentrt.store.gauges import count_with_status


@dataclass
class ApiMetrics:
    registry: CollectorRegistry = field(default_factory=new_registry)

    def watch(self, ctx: StoreContext) -> None:
        """Count in this store (known once the app has opened it)."""
        waiting_gauge(self.registry, lambda: count_with_status(ctx, RunStatus.WAITING_FOR_APPROVAL))
        reconciliation_gauge(
            self.registry, lambda: count_with_status(ctx, RunStatus.AWAITING_RECONCILIATION)
        )
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
