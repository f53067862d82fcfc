"""The web process's /metrics: its HTTP requests by method, route template and status
(api/request_metrics.py), the store gauges the workers serve too (runs waiting, the oldest
wait, whether the store answers), the push dead letters (counted in the store: right after
a restart, and the same on every API process) with the time of the newest, the pollers of
the workflow task queues it starts runs on (core/queue_pollers.py), and the process
collectors. The Temporal SDK's metrics of its client are on AGENTRT_TEMPORAL_METRICS_PORT
(core/metrics.py)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from temporalio.client import Client

from agentrt.api.request_metrics import RequestMetrics, instrument
from agentrt.core.metrics import new_registry
from agentrt.core.queue_pollers import QueuePollers, Watched, watch_queues
from agentrt.core.read_gauges import ReadGauge
from agentrt.store.a2a.push import count_dead, last_dead_at
from agentrt.store.db.context import StoreContext
from agentrt.store.ops.gauges import watch_store
from agentrt.store.ops.registry import ProfileRegistry


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
        self.registry.register(
            ReadGauge(
                "agentrt_push_last_dead_letter_timestamp_seconds",
                "When the newest push dead letter was given up (Unix seconds; 0 when none).",
                lambda: last_dead_at(ctx),
            )
        )

    def watch_queues(self, client: Client, ctx: StoreContext, default_queue: str) -> QueuePollers:
        """The pollers of every workflow queue this process starts runs on: its default
        AGENTRT_TASK_QUEUE, and each queue a worker registered a profile on (keep it
        `running` while the app serves)."""
        registry = ProfileRegistry(ctx)

        def queues() -> list[Watched]:
            found = registry.task_queues()
            return [Watched(q or default_queue, "workflow") for q in {*found, None}]

        return watch_queues(self.registry, client, queues)


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
