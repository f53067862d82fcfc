"""The worker's /metrics, scraped over real HTTP after real runs on the dev server.

The worker has a database of its own, so every value is exact: counts by outcome and
reason, tokens and cost, fenced writes, a write left outcome unknown, and the waiting
gauge going 1 → 0 across an approval."""

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.errors import ConfigError
from agentrt.core.metrics import serve_metrics
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import make_worker
from agentrt.workers.compose import build
from tests._db import migrated, scratch_database
from tests.conftest import UnknownOutcome
from tests.workflows._waiting import until_status

REFUND = "Please refund order 1042"  # lookup_order, then issue_refund, then an answer
PRICES = "providers:\n  - name: scripted\n    prices: {default: {input: 1, output: 2}}\n"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    reply = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert reply.status_code == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(reply.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """Summed over the labels not named."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


@pytest.fixture
def own_settings(settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    (tmp_path / "providers.yaml").write_text(PRICES)
    with scratch_database("m", tmp_path / "metrics.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        yield settings.replace(
            database={"url": url},
            telemetry={"metrics_port": 0},
            providers={"file": tmp_path / "providers.yaml"},
            temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
        )


@pytest.mark.timeout(120)
async def test_scraped_values_follow_the_runs(client: Client, own_settings: Settings) -> None:
    # The first write to be claimed dies before its effect, and the refund's reconcile
    # probe never answers (its target "down"): its outcome is unknown.
    resources = build(own_settings, faults=UnknownOutcome())
    with resources, serve_metrics(own_settings, resources.metrics.registry) as port:
        assert port
        runtime = AgentRuntime(client, RunStore(resources.ctx), own_settings.temporal.task_queue)
        async with make_worker(client, resources, own_settings):
            unknown = await runtime.result(await runtime.start("auto", REFUND))
            assert unknown.termination_reason is TerminationReason.INTERRUPTED_WRITE
            done = await runtime.result(await runtime.start("auto", REFUND))
            assert done.status is RunStatus.COMPLETED
            waiting_id = await runtime.start("support", REFUND, initiator="alice")
            waiting = await until_status(runtime, waiting_id, RunStatus.WAITING_FOR_APPROVAL)

            before = scrape(port)
            assert value(before, "agentrt_runs_waiting_for_approval") == 1
            assert value(before, "agentrt_approval_wait_seconds_count") == 0
            assert 0 < value(before, "agentrt_oldest_waiting_run_seconds") < 60

            assert waiting.pending_approval is not None
            await runtime.approve(
                waiting_id, approved=True, decided_by="bob",
                turn_digest=waiting.pending_approval.turn_digest,
            )  # fmt: skip
            approved = await runtime.result(waiting_id)
            assert approved.status is RunStatus.COMPLETED
            after = scrape(port)

    views = [unknown, done, approved]
    assert value(after, "agentrt_runs_waiting_for_approval") == 0
    assert value(after, "agentrt_oldest_waiting_run_seconds") == 0
    assert value(after, "agentrt_store_up") == 1
    assert value(after, "agentrt_runs_awaiting_reconciliation") == 0  # "auto" says fail
    assert value(after, "agentrt_approval_wait_seconds_count") == 1
    assert 0 < value(after, "agentrt_approval_wait_seconds_sum") < 60
    assert value(after, "agentrt_runs_started_total", profile="auto") == 2
    assert value(after, "agentrt_runs_started_total", profile="support") == 1
    assert value(after, "agentrt_runs_ended_total", outcome="COMPLETED", reason="answered") == 2
    assert (
        value(after, "agentrt_runs_ended_total", outcome="FAILED", reason="interrupted_write") == 1
    )
    assert total(after, "agentrt_runs_ended_total") == 3
    assert value(after, "agentrt_writes_fenced_total") == 3  # every refund claimed its fence
    assert value(after, "agentrt_writes_outcome_unknown_total") == 1
    assert value(after, "agentrt_runs_outcome_unknown") == 1  # the failed run, unresolved
    assert value(after, "agentrt_oldest_awaiting_reconciliation_seconds") == 0
    # Tokens and cost: what the runs themselves recorded, by provider and model.
    labels = {"provider": "scripted", "model": "demo"}
    prompt = sum(v.prompt_tokens for v in views)
    completion = sum(v.completion_tokens for v in views)
    assert prompt > 0 and completion > 0
    assert value(after, "agentrt_model_tokens_total", kind="prompt", **labels) == prompt
    assert value(after, "agentrt_model_tokens_total", kind="completion", **labels) == completion
    expected_cost = (prompt * 1 + completion * 2) / 1_000_000
    assert value(after, "agentrt_model_cost_usd_total", **labels) == pytest.approx(expected_cost)
    # Activity latency: one observation per model call, each of the three runs has some.
    model_calls = value(
        after, "agentrt_activity_seconds_count", activity="model.complete", result="ok"
    )
    assert model_calls >= 7  # 2 + 3 + 3 rounds (the failed run stops after its write)
    assert value(after, "agentrt_activity_seconds_count", activity="write.execute", result="error")
    assert value(after, "process_resident_memory_bytes") > 0
    # The same calls per provider and per tool, by configured names.
    assert value(after, "agentrt_model_calls_total", provider="scripted", result="ok") == (
        model_calls
    )
    assert value(after, "agentrt_tool_calls_total", toolbox="demo", tool="lookup_order",
                 result="ok") == 3  # fmt: skip
    assert total(after, "agentrt_activity_schedule_to_start_seconds_count") >= model_calls


def test_a_metrics_port_in_use_is_one_clear_error(settings: Settings) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = settings.replace(telemetry={"metrics_port": port})
        from agentrt.core.metrics import new_registry

        with pytest.raises(ConfigError, match=rf"AGENTRT_METRICS_PORT: .*127\.0\.0\.1:{port}"):
            with serve_metrics(busy, new_registry()):
                pass


def test_metrics_are_off_unless_a_port_is_set(settings: Settings) -> None:
    from agentrt.core.metrics import new_registry

    with serve_metrics(settings.replace(telemetry={"metrics_port": None}), new_registry()) as p:
        assert p is None
