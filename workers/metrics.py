"""The worker's metrics, recorded where the facts are known: in the store calls the
activities make (a guarded write that applied is a fact; an attempt is not) and around
each activity. Never in workflow code, which must stay deterministic.

The store subclasses below are what the composition root injects for the activity ports:
each calls the real store, then records what the store reported. The completion, the
settle and the fence (activities/settle/, fence/) hold their SQL themselves
and are told through callbacks or handed their counters' `inc` (workers/compose.py)."""

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from temporalio import activity
from temporalio.worker import ExecuteActivityInput

from agentrt.contracts.enums import Outcome, TerminationReason
from agentrt.contracts.run import TurnRecord
from agentrt.core.metrics import new_registry
from agentrt.store.db.context import StoreContext, utcnow
from agentrt.store.runs.record import NewRun, RunStore
from agentrt.workers.around import AroundActivities

# Approvals take seconds to days.
WAIT_BUCKETS = (1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86400, 3 * 86400, 7 * 86400)
ACTIVITY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
# Model calls take from milliseconds (scripted) to minutes (long reasoning).
CALL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)


class _ServerUp(Collector):
    """`agentrt_mcp_server_up{server}`: 1 while an MCP server answers, 0 while it is down
    (its tools are not offered), read at each scrape."""

    def __init__(self, status: Callable[[], Mapping[str, bool]]) -> None:
        self._status = status

    def collect(self) -> Iterable[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "agentrt_mcp_server_up",
            "1 while the MCP server's tools are listed and offered, 0 while it is down.",
            labels=["server"],
        )
        for server, up in sorted(self._status().items()):
            family.add_metric([server], 1.0 if up else 0.0)
        return [family]


def mcp_gauge(registry: CollectorRegistry, status: Callable[[], Mapping[str, bool]]) -> None:
    registry.register(_ServerUp(status))


@dataclass
class WorkerMetrics:
    registry: CollectorRegistry
    runs_started: Counter
    runs_ended: Counter
    approval_wait: Histogram
    writes_fenced: Counter
    writes_unknown: Counter
    writes_answered: Counter
    writes_reconciled: Counter
    tokens: Counter
    cost: Counter
    activity_seconds: Histogram
    schedule_to_start: Histogram
    calls: "CallMetrics"

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None) -> "WorkerMetrics":
        r = registry if registry is not None else new_registry()
        return cls(
            registry=r,
            runs_started=counter(
                r, "agentrt_runs_started", "Runs created, by profile.", ["profile"]
            ),
            runs_ended=counter(
                r, "agentrt_runs_ended", "Runs settled, by outcome and termination reason.",
                ["outcome", "reason"],
            ),
            approval_wait=histogram(
                r, "agentrt_approval_wait_seconds",
                "From the suspension to the decision that resumed the run.", [], WAIT_BUCKETS,
            ),
            writes_fenced=counter(
                r, "agentrt_writes_fenced", "Non-idempotent writes that claimed their fence."
            ),
            writes_unknown=counter(
                r, "agentrt_writes_outcome_unknown",
                "Claimed writes interrupted before their result was recorded.",
            ),
            writes_answered=counter(
                r, "agentrt_writes_answered",
                "Answers an operator gave on a write with an unknown outcome, by answer.",
                ["answer"],
            ),
            # One per interrupted write reconciled, by what the run goes on with; the probe's
            # calls themselves (retries, failures) are CallMetrics.probe_calls.
            writes_reconciled=counter(
                r, "agentrt_writes_reconciled",
                "Interrupted writes reconciled, by the verdict acted on (applied, not_applied, "
                "unknown).",
                ["verdict"],
            ),
            tokens=counter(
                r, "agentrt_model_tokens",
                "Model tokens, by provider, model and kind (prompt, completion).",
                ["provider", "model", "kind"],
            ),
            cost=counter(
                r, "agentrt_model_cost_usd",
                "Model cost in USD where known, by provider and model.", ["provider", "model"],
            ),
            activity_seconds=histogram(
                r, "agentrt_activity_seconds",
                "Activity execution time in this worker, by activity type and result.",
                ["activity", "result"], ACTIVITY_BUCKETS,
            ),
            schedule_to_start=histogram(
                r, "agentrt_activity_schedule_to_start_seconds",
                "From an activity attempt's scheduling to its start in this worker: the "
                "backlog of its task queue, as the worker met it.",
                ["activity"], ACTIVITY_BUCKETS,
            ),
            calls=CallMetrics.create(r),
        )  # fmt: skip


def counter(r: CollectorRegistry, name: str, doc: str, labels: Sequence[str] = ()) -> Counter:
    """A counter in `r` (scraped as `<name>_total`), labelled by `labels`."""
    return Counter(name, doc, labels, registry=r)


def histogram(
    r: CollectorRegistry, name: str, doc: str, labels: Sequence[str], buckets: Sequence[float]
) -> Histogram:
    return Histogram(name, doc, labels, buckets=buckets, registry=r)


@dataclass
class CallMetrics:
    """Per-provider and per-tool calls, made by the wrappers in workers/call_metrics.py.
    Labels are names from the worker's configuration (a provider, a toolbox, a registered
    tool), never anything a prompt or a model chose."""

    model_calls: Counter
    model_seconds: Histogram
    fallbacks: Counter
    tool_calls: Counter
    tool_seconds: Histogram
    probe_calls: Counter

    @classmethod
    def create(cls, r: CollectorRegistry) -> "CallMetrics":
        return cls(
            model_calls=counter(
                r, "agentrt_model_calls",
                "Model provider calls, by provider and result (ok, error).", ["provider", "result"],
            ),
            model_seconds=histogram(
                r, "agentrt_model_call_seconds",
                "Model provider call latency, by provider and result.",
                ["provider", "result"], CALL_BUCKETS,
            ),
            fallbacks=counter(
                r, "agentrt_model_fallbacks",
                "Model calls that failed over to the profile's fallback model, by provider.",
                ["provider", "fallback_provider"],
            ),
            tool_calls=counter(
                r, "agentrt_tool_calls", "Tool calls, by toolbox, tool and result (ok, error).",
                ["toolbox", "tool", "result"],
            ),
            tool_seconds=histogram(
                r, "agentrt_tool_call_seconds", "Tool call latency, by toolbox, tool and result.",
                ["toolbox", "tool", "result"], CALL_BUCKETS,
            ),
            # Every call of a write's reconcile probe (retries too), by what it answered;
            # the writes reconciled, once each, are WorkerMetrics.writes_reconciled.
            probe_calls=counter(
                r, "agentrt_reconcile_probe_calls",
                "Reconcile probe calls, by toolbox, tool and the probe's verdict (applied, "
                "not_applied, unknown; error: the probe raised).",
                ["toolbox", "tool", "verdict"],
            ),
        )  # fmt: skip


class MeteredRunStore(RunStore):
    def __init__(self, ctx: StoreContext, metrics: WorkerMetrics) -> None:
        super().__init__(ctx)
        self._metrics = metrics

    def begin(self, new: NewRun) -> bool:
        created = super().begin(new)
        if created:  # a retried begin finds its row: one run, counted once
            self._metrics.runs_started.labels(profile=new.profile).inc()
        return created

    def record_turn(self, run_id: str, turn: TurnRecord) -> None:
        super().record_turn(run_id, turn)
        count_turn(self._metrics, turn.payload)


def count_turn(m: WorkerMetrics, payload: dict[str, Any]) -> None:
    """A recorded model turn's tokens and cost. Once per turn: a retried model call returns
    the recorded turn instead of recording it again."""
    provider, _, model = str(payload.get("model", "")).partition(":")
    for kind in ("prompt", "completion"):
        n = payload.get(f"{kind}_tokens")
        if isinstance(n, int) and n > 0:
            m.tokens.labels(provider=provider, model=model, kind=kind).inc(n)
    cost = payload.get("cost_usd")
    if isinstance(cost, int | float) and cost > 0:
        m.cost.labels(provider=provider, model=model).inc(float(cost))


def run_ended(m: WorkerMetrics) -> Callable[[Outcome, TerminationReason], None]:
    """What the completion and the settle tell of a run they ended (applied, so once)."""

    def ended(outcome: Outcome, reason: TerminationReason) -> None:
        m.runs_ended.labels(outcome=outcome.value, reason=reason.value).inc()

    return ended


class ActivityTiming(AroundActivities):
    """Times every activity this worker executes (the SDK's own latency metrics are on
    the Temporal metrics port)."""

    def __init__(self, metrics: WorkerMetrics) -> None:
        self._metrics = metrics
        # The labelled children, per activity type: `labels()` validates and locks on every
        # call, twice an activity otherwise.
        self._waits: dict[str, Any] = {}
        self._times: dict[tuple[str, str], Any] = {}

    @contextmanager
    def around(self, input: ExecuteActivityInput) -> Iterator[None]:
        info = activity.info()
        kind = info.activity_type
        wait = self._waits.get(kind)
        if wait is None:
            wait = self._waits[kind] = self._metrics.schedule_to_start.labels(activity=kind)
        # The attempt's own scheduling (a retry's, not the first attempt's) to now.
        wait.observe(max(0.0, (utcnow() - info.current_attempt_scheduled_time).total_seconds()))
        started, result = time.monotonic(), "error"
        try:
            yield
            result = "ok"
        finally:
            took = self._times.get((kind, result))
            if took is None:
                took = self._times[kind, result] = self._metrics.activity_seconds.labels(
                    activity=kind, result=result
                )
            took.observe(time.monotonic() - started)
