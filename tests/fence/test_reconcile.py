"""Reconciliation in a real run (a worker in this process, the real Temporal dev server and
database): a Python write that says "not applied" or "failed after applying", and a write
interrupted after its claim whose probe answers applied, not applied, unknown, or keeps
failing. The worker SIGKILLed inside the write window: test_reconcile_kill.py."""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from agentrt import (
    Reconciled,
    RunStatus,
    Settings,
    TerminationReason,
    ToolFailedAfterApplying,
    ToolNotApplied,
)
from agentrt.contracts.enums import EventKind, PendingState
from agentrt.contracts.ids import ACT_WRITE_EXECUTE, ACT_WRITE_RECONCILE
from agentrt.contracts.views import EventView, RunView
from agentrt.store.runs.record import RunStore
from agentrt.workers.metrics import WorkerMetrics
from tests._payments import Probe, payer, payments
from tests._rules import one_call, scripted_worker
from tests.workflows._replay import assert_replays, fetch, scheduled

PROMPT = "Please pay the invoice"
RULES = one_call(
    "pay", "pay", {"invoice": "inv-7"}, "Done with the invoice.", "I only pay invoices."
)


class Target:
    """The target system: the payments it holds, by idempotency key, and every call made."""

    def __init__(self) -> None:
        self.applied: dict[str, str] = {}
        self.calls: list[str] = []
        self.probes: list[str] = []
        self._lock = threading.Lock()

    def pay(self, key: str, invoice: str) -> str:
        with self._lock:
            self.calls.append(key)
            self.applied[key] = f"paid {invoice} (payment #{len(self.applied) + 1})"
            return self.applied[key]


Behaviour = Callable[[Target, str, str, int], str]


def _tool_messages(runs: RunStore, run_id: str) -> list[tuple[str, bool]]:
    return [(m.content, m.is_error) for m in runs.transcript(run_id) if m.role == "tool"]


@dataclass(frozen=True)
class Paid:
    """A run of PROMPT, read while its worker still ran."""

    view: RunView
    messages: list[tuple[str, bool]]  # the tool messages of its transcript
    events: list[EventView]
    metrics: WorkerMetrics  # what its worker recorded

    @property
    def steps(self) -> list[EventView]:
        """Its TOOL events."""
        return [e for e in self.events if e.kind is EventKind.TOOL]


async def _pay(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    target: Target,
    behave: Behaviour,
    probe: Probe | None,
) -> Paid:
    """Run PROMPT on a worker whose `pay` is `behave(target, key, invoice, attempt)`,
    reconciled by `probe`."""
    box = payments(lambda key, invoice: behave(target, key, invoice, len(target.calls)), probe)
    async with scripted_worker(client, settings, tmp_path, payer(), [box], RULES) as w:
        view = await w.runtime.run(w.profile, PROMPT)
        events = w.runs.events(view.run_id)
        return Paid(view, _tool_messages(w.runs, view.run_id), events, w.metrics)


def _counted(paid: Paid, sample: str, **labels: str) -> float:
    """A sample of the run's worker's metrics (0 where it was never recorded)."""
    return paid.metrics.registry.get_sample_value(sample, labels) or 0.0


def _reconciled(paid: Paid, verdict: str, probe_calls: int) -> None:
    """The worker counted the write reconciled once, by `verdict`, and `probe_calls` calls
    of its probe answering it (the probe's own verdict, per call)."""
    for v in ("applied", "not_applied", "unknown"):
        want = 1 if v == verdict else 0
        assert _counted(paid, "agentrt_writes_reconciled_total", verdict=v) == want, v
    tool = {"toolbox": "payments", "tool": "pay"}
    assert _counted(paid, "agentrt_reconcile_probe_calls_total", **tool, verdict=verdict) == (
        probe_calls
    )


async def _writes(client: Client, run_id: str) -> tuple[int, int]:
    """How many write.execute and write.reconcile activities the run scheduled."""
    types = scheduled(await fetch(client, run_id))
    return types.count(ACT_WRITE_EXECUTE), types.count(ACT_WRITE_RECONCILE)


# --- the tool's own word: typed exceptions ---------------------------------------------


def _refuses(target: Target, key: str, invoice: str, attempt: int) -> str:
    target.calls.append(key)
    raise ToolNotApplied(f"invoice {invoice} is already settled")


def _half_done(target: Target, key: str, invoice: str, attempt: int) -> str:
    target.pay(key, invoice)
    raise ToolFailedAfterApplying("the receipt could not be fetched")


async def test_a_write_raising_not_applied_goes_on_with_an_error_result(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()
    paid = await _pay(client, settings, tmp_path, target, _refuses, probe=None)
    view = paid.view
    assert view.status is RunStatus.COMPLETED and view.answer == "Done with the invoice."
    assert view.pending_effect is None  # the fence was cleared
    assert paid.messages == [("pay failed: invoice inv-7 is already settled", True)]
    assert len(target.calls) == 1 and target.applied == {}
    assert ACT_WRITE_RECONCILE not in scheduled(await fetch(client, view.run_id))


async def test_a_write_failed_after_applying_is_recorded_and_never_repeated(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()
    paid = await _pay(client, settings, tmp_path, target, _half_done, probe=None)
    assert paid.view.status is RunStatus.COMPLETED and paid.view.pending_effect is None
    assert paid.messages == [
        ("pay was applied, then failed: the receipt could not be fetched", True)
    ]
    assert len(target.applied) == 1 and len(target.calls) == 1


# --- interrupted after the claim: the probe answers -------------------------------------


def _applies_then_raises(target: Target, key: str, invoice: str, attempt: int) -> str:
    target.pay(key, invoice)
    raise RuntimeError("connection reset after the payment was sent")


def _lost_then_works(target: Target, key: str, invoice: str, attempt: int) -> str:
    if attempt == 0:
        target.calls.append(key)
        raise RuntimeError("connection reset before the payment was sent")
    return target.pay(key, invoice)


def _by_key(target: Target) -> Callable[[str, dict[str, Any]], Reconciled]:
    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        target.probes.append(key)
        done = target.applied.get(key)
        return Reconciled.applied(done) if done is not None else Reconciled.not_applied()

    return probe


async def test_an_interrupted_write_the_probe_finds_applied_completes_with_its_result(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()
    paid = await _pay(client, settings, tmp_path, target, _applies_then_raises, _by_key(target))
    [key] = target.calls  # ran once
    assert key.startswith(f"{paid.view.run_id}/")
    assert paid.view.pending_effect is None
    [step] = paid.steps
    assert step.payload["reconciled"] is True
    await _paid_once(client, paid, target, writes=1, verdict="applied")


async def _paid_once(client: Client, paid: Paid, target: Target, writes: int, verdict: str) -> None:
    """The run completed with the one payment's result, its probe asked once, about the
    key its write first ran with, answering `verdict`; `writes` write executions
    scheduled; it replays."""
    _reconciled(paid, verdict, probe_calls=1)
    view = paid.view
    assert view.status is RunStatus.COMPLETED, view
    assert paid.messages == [("paid inv-7 (payment #1)", False)]
    assert target.probes == [target.calls[0]]  # asked once
    assert await _writes(client, view.run_id) == (writes, 1)
    await assert_replays(await fetch(client, view.run_id))


async def test_an_interrupted_write_the_probe_finds_not_applied_runs_again_with_the_same_key(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()
    paid = await _pay(client, settings, tmp_path, target, _lost_then_works, _by_key(target))
    [first, second] = target.calls
    assert first == second  # the re-execution carries the same idempotency key
    assert len(target.applied) == 1
    await _paid_once(client, paid, target, writes=2, verdict="not_applied")


@pytest.mark.parametrize("answer", ["unknown", "raises"])
async def test_an_interrupted_write_without_an_answer_fails_as_before(
    client: Client, settings: Settings, tmp_path: Path, answer: str
) -> None:
    target = Target()

    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        target.probes.append(key)
        if answer == "raises":
            raise ConnectionError("the payments API is down")
        return Reconciled.unknown()

    paid = await _pay(client, settings, tmp_path, target, _applies_then_raises, probe)
    view = paid.view
    assert paid.messages == []
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert view.pending_effect is not None
    assert view.pending_effect.state is PendingState.OUTCOME_UNKNOWN
    assert len(target.calls) == 1  # never repeated
    assert len(target.probes) == (5 if answer == "raises" else 1)  # retried, then given up
    if answer == "unknown":
        _reconciled(paid, "unknown", probe_calls=1)
    else:  # every call failed: no verdict to act on, five failed probe calls
        _reconciled(paid, "error", probe_calls=5)
    await assert_replays(await fetch(client, view.run_id))


async def test_an_interrupted_write_with_no_probe_fails_and_asks_nothing(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()
    view = (await _pay(client, settings, tmp_path, target, _applies_then_raises, None)).view
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert len(target.calls) == 1
    history = await client.get_workflow_handle(view.run_id).fetch_history()
    marked = [
        p.data
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        for d in e.marker_recorded_event_attributes.details.values()
        for p in d.payloads
    ]
    assert marked and not any(b"fence-reconcile" in data for data in marked)
    assert ACT_WRITE_RECONCILE not in scheduled(await fetch(client, view.run_id))
