"""The A2A server's /metrics: the runs waiting for approval, counted in the store at each
scrape (the same gauge the workers serve), and the process collectors. The Temporal SDK's
metrics of its client are on AGENTRT_TEMPORAL_METRICS_PORT (core/metrics.py)."""

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from agentrt.contracts.enums import RunStatus
from agentrt.core.metrics import new_registry, waiting_gauge
from agentrt.store.context import StoreContext
from agentrt.store.gauges import count_with_status


@dataclass
class ApiMetrics:
    registry: CollectorRegistry = field(default_factory=new_registry)

    def watch(self, ctx: StoreContext) -> None:
        """Count in this store (known once the app has opened it)."""
        waiting_gauge(self.registry, lambda: count_with_status(ctx, RunStatus.WAITING_FOR_APPROVAL))


def api_registry() -> ApiMetrics:
    return ApiMetrics()
