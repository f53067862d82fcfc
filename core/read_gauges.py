"""Gauges read at scrape time (a COUNT in the store, its oldest wait, whether it answers),
apart from core/metrics.py so that the store's own gauges (store/ops/gauges.py) can use them
without importing the Temporal SDK that the metrics ports need."""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

logger = logging.getLogger("agentrt.metrics")


class ReadGauge(Collector):
    """A gauge read at scrape time (e.g. a COUNT in the store), so it is right after any
    restart and across workers. A failed read drops the sample, not the whole scrape."""

    def __init__(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        self._name, self._doc, self._read = name, documentation, read

    def collect(self) -> Iterable[GaugeMetricFamily]:
        try:
            value = float(self._read())
        except Exception as exc:
            logger.warning("metric %s not read: %s", self._name, type(exc).__name__)
            return []
        return [GaugeMetricFamily(self._name, self._doc, value=value)]


def waiting_gauge(registry: CollectorRegistry, count: Callable[[], int]) -> None:
    """Runs waiting for approval, counted in the store at each scrape: right after any
    restart, and the same on every worker and API process (aggregate with max, not sum)."""
    registry.register(
        ReadGauge(
            "agentrt_runs_waiting_for_approval",
            "Runs waiting for an approval decision (counted in the store at scrape time).",
            count,
        )
    )


@dataclass(frozen=True)
class StoreReads:
    """What the store-read gauges read, each a cheap query run at scrape time."""

    count_waiting: Callable[[], int]  # runs waiting for an approval
    oldest_waiting: Callable[[], float]  # the oldest such wait, in seconds (0: none)
    answers: Callable[[], bool]  # the store takes a query
    count_reconciling: Callable[[], int]  # runs waiting for a person's answer on a write
    oldest_reconciling: Callable[[], float]  # the oldest such wait, in seconds (0: none)
    count_outcome_unknown: Callable[[], int]  # failed runs whose write is still unresolved


def store_gauges(registry: CollectorRegistry, reads: StoreReads) -> None:
    """The store-read gauges every process serves (workers and API): runs waiting and the
    oldest wait, runs awaiting a person's answer on a write (`on_unknown_outcome: ask`) and
    the oldest of those, runs failed with a write's outcome still unresolved, and whether
    the store answers at all (0, never a missing sample, when it does not: an alert on a
    missing series would also fire for a target that is gone)."""
    waiting_gauge(registry, reads.count_waiting)
    for name, doc, read in (
        ("agentrt_oldest_waiting_run_seconds",
         "Age of the oldest run waiting for approval (0 when none; read at scrape time).",
         reads.oldest_waiting),
        ("agentrt_runs_awaiting_reconciliation",
         "Runs waiting for an operator's answer on a write whose outcome is unknown.",
         reads.count_reconciling),
        ("agentrt_oldest_awaiting_reconciliation_seconds",
         "How long the oldest run awaiting an answer on a write has waited (0 when none).",
         reads.oldest_reconciling),
        ("agentrt_runs_outcome_unknown",
         "Runs failed with a write's outcome unknown that nobody has resolved yet (GET "
         "/attention lists them); a write its probe or an operator reconciled is not one.",
         reads.count_outcome_unknown),
    ):  # fmt: skip
        registry.register(ReadGauge(name, doc, read))
    registry.register(_StoreUp(reads.answers))


class _StoreUp(Collector):
    def __init__(self, answers: Callable[[], bool]) -> None:
        self._answers = answers

    def collect(self) -> Iterable[GaugeMetricFamily]:
        try:
            up = 1.0 if self._answers() else 0.0
        except Exception as exc:
            logger.warning("store check failed: %s", type(exc).__name__)
            up = 0.0
        doc = "1 when the agentrt store answered a query at scrape time, else 0."
        return [GaugeMetricFamily("agentrt_store_up", doc, value=up)]
