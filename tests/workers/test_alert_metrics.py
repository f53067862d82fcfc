"""The gauges the alerts read (deploy/prometheus/alerts.yml), over real runs on the dev
server with a database of the test's own, so every count is exact:

- a write interrupted after applying, whose probe then finds it applied: the run completes;
  the interruption is counted (agentrt_writes_outcome_unknown_total 1, the old page's
  input) but no run is left with its outcome unknown (agentrt_runs_outcome_unknown 0: the
  page AgentrtWriteOutcomeUnknown stays silent, as its promtool test says it must);
- the same write whose probe cannot say: the run fails `interrupted_write`, and the gauge
  counts it (the page fires) until the run leaves the attention list;
- a run awaiting a person's answer on its write: counted, with its wait's age;
- the task queue pollers, as Temporal lists them: the worker's own queue polled, a routed
  tool queue nobody polls at 0."""

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from agentrt import (
    Reconciled,
    RunStatus,
    Settings,
    TerminationReason,
    Toolbox,
)
from agentrt.core.devserver import free_port
from agentrt.core.queue_pollers import QueuePollers, Watched
from agentrt.store.runs.query import RunQuery
from agentrt.workers.fleet import watched_queues
from agentrt.workers.metrics import WorkerMetrics
from tests._db import migrated, scratch_database
from tests._payments import payer, payments
from tests._rules import one_call, scripted_worker

RULES = one_call("pay", "pay", {"invoice": "inv-9"}, "Paid.", "I only pay invoices.")


@pytest.fixture
def own(settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    with scratch_database("al", tmp_path / "alerts.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        yield settings.replace(database={"url": url})


def _box(verdict: Callable[[], Reconciled]) -> Toolbox:
    """`pay`: applies, then its connection drops (outcome unknown); its probe says
    `verdict()`."""
    paid: dict[str, str] = {}
    lock = threading.Lock()

    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        answer = verdict()
        return Reconciled.applied(paid[key]) if answer.verdict == "applied" else answer

    def pay(key: str, invoice: str) -> str:
        with lock:
            paid[key] = f"paid {invoice}"
        raise RuntimeError("connection reset after the payment was sent")

    return payments(pay, probe)


def _gauge(metrics: WorkerMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    assert value is not None, f"{name} has no sample"
    return value


async def test_a_reconciled_write_is_no_unresolved_outcome_and_a_failed_one_is(
    client: Client, own: Settings, tmp_path: Path
) -> None:
    applied = Reconciled.applied("")
    profile = payer()
    async with scripted_worker(client, own, tmp_path, profile, [_box(lambda: applied)], RULES) as w:
        view = await w.runtime.run(w.profile, "please pay")
        assert view.status is RunStatus.COMPLETED, view
        assert _gauge(w.metrics, "agentrt_writes_outcome_unknown_total") == 1
        assert _gauge(w.metrics, "agentrt_writes_reconciled_total", verdict="applied") == 1
        assert _gauge(w.metrics, "agentrt_runs_outcome_unknown") == 0

    profile = payer()
    unknown = Reconciled.unknown()
    async with scripted_worker(client, own, tmp_path, profile, [_box(lambda: unknown)], RULES) as w:
        view = await w.runtime.run(w.profile, "please pay")
        assert view.status is RunStatus.FAILED
        assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
        assert _gauge(w.metrics, "agentrt_runs_outcome_unknown") == 1
        # The gauge counts exactly the runs GET /attention names as outcome_unknown.
        listed = RunQuery(w.runs.ctx).attention(visible_to=None)
        assert [v.run_id for v in listed] == [view.run_id]


async def test_a_run_awaiting_an_answer_on_its_write_is_counted_with_its_age(
    client: Client, own: Settings, tmp_path: Path
) -> None:
    profile = payer(on_unknown_outcome="ask")
    unknown = Reconciled.unknown()
    async with scripted_worker(client, own, tmp_path, profile, [_box(lambda: unknown)], RULES) as w:
        run_id = await w.runtime.start(w.profile, "please pay")
        async for event in w.runtime.follow(run_id):
            if getattr(event, "kind", None) == "reconcile_requested":
                break
        assert (await w.runtime.status(run_id)).status is RunStatus.AWAITING_RECONCILIATION
        assert _gauge(w.metrics, "agentrt_runs_awaiting_reconciliation") == 1
        age = _gauge(w.metrics, "agentrt_oldest_awaiting_reconciliation_seconds")
        assert 0 < age < 300
        assert _gauge(w.metrics, "agentrt_runs_outcome_unknown") == 0  # asked, not failed
        await w.runtime.cancel(run_id, by="test")
        await w.runtime.result(run_id)
        assert _gauge(w.metrics, "agentrt_oldest_awaiting_reconciliation_seconds") == 0


async def test_the_pollers_gauge_reads_who_polls_each_queue(
    client: Client, own: Settings, tmp_path: Path
) -> None:
    """A worker polls its workflow queue; the tool queue its runs are routed to has no
    worker: 1 and 0, as Temporal lists them, by queue and kind."""
    profile = payer()
    assert profile.task_queue is not None
    tools = f"tools-{uuid.uuid4().hex[:8]}"
    routed = own.replace(
        temporal={"task_queue": profile.task_queue}, worker={"tool_task_queue": tools}
    )
    watched = watched_queues(routed, ["scripted"])
    assert watched == sorted([Watched(profile.task_queue, "workflow"), Watched(tools, "activity")])
    pollers = QueuePollers(client, lambda: watched)
    async with scripted_worker(client, own, tmp_path, profile, [_box(Reconciled.unknown)], RULES):
        # Temporal lists the worker once its first poll reached the server: wait for that.
        for _ in range(100):
            counts = await pollers.refresh()
            if counts[Watched(profile.task_queue, "workflow")]:
                break
            await asyncio.sleep(0.1)
    assert counts == {Watched(profile.task_queue, "workflow"): 1, Watched(tools, "activity"): 0}
    samples = {
        (s.labels["task_queue"], s.labels["kind"]): s.value
        for family in pollers.collect()
        for s in family.samples
    }
    assert samples == {(profile.task_queue, "workflow"): 1.0, (tools, "activity"): 0.0}


async def test_a_temporal_that_does_not_answer_leaves_no_sample_and_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No sample, not a 0: the no-poller alert must not fire because Temporal itself is
    away (its own alerts say that); the outage is one log line, not one per pass."""
    away = await Client.connect(f"127.0.0.1:{free_port()}", lazy=True)
    pollers = QueuePollers(away, lambda: [Watched("q", "workflow")])
    with caplog.at_level(logging.WARNING, logger="agentrt.metrics"):
        assert await pollers.refresh() == {}
        assert await pollers.refresh() == {}
    [family] = pollers.collect()
    assert family.samples == []
    lines = [r.getMessage() for r in caplog.records if "pollers not read" in r.getMessage()]
    assert len(lines) == 1 and "q (" in lines[0]
