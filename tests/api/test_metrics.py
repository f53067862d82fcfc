"""`agentrt-api serve` with AGENTRT_METRICS_PORT: the waiting gauge, counted in the store at
each scrape, goes 1 → 0 across an approval made while the API process runs, its requests
are counted by route template, it reports the pollers of the task queue it starts runs on
(the test's worker polls it) and the time of the newest push dead letter (none: 0)."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import make_worker
from agentrt.workers.compose import build
from tests._db import migrated, scratch_database
from tests.workers.test_telemetry_process import free_port
from tests.workflows._waiting import until_status

GAUGE = "agentrt_runs_waiting_for_approval "
POLLERS = "agentrt_task_queue_pollers{"


def _spawn(env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    with (cwd / "api.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "agentrt.api.main", "serve"],
            env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip


async def _gauge(port: int, proc: subprocess.Popen[bytes], gauge: str = GAUGE) -> float:
    async with httpx.AsyncClient(timeout=5) as http:
        for _ in range(200):
            assert proc.poll() is None, "the API process exited"
            try:
                text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
            except httpx.TransportError:
                await asyncio.sleep(0.1)
                continue
            lines = [ln for ln in text.splitlines() if ln.startswith(gauge)]
            if lines:
                return float(lines[0].split()[1])
            await asyncio.sleep(0.1)
    raise AssertionError("the API never served the gauge")


@pytest.mark.timeout(120)
async def test_the_api_serves_the_waiting_gauge(
    client: Client, temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    with scratch_database("am", tmp_path / "api-metrics.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        own = settings.replace(
            database={"url": url}, temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"}
        )
        metrics_port, api_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
        env.update(
            AGENTRT_DATABASE_URL=url,
            AGENTRT_SEAL_KEYS=settings.read_seal_keys(),
            AGENTRT_TEMPORAL_ADDRESS=temporal_env.client.service_client.config.target_host,
            AGENTRT_PROFILES_FILE=str(settings.worker.profiles_file),
            AGENTRT_TASK_QUEUE=own.temporal.task_queue,
            AGENTRT_API_PORT=str(api_port),
            AGENTRT_METRICS_PORT=str(metrics_port),
            AGENTRT_LOG_FORMAT="json",
        )
        with build(own) as resources:
            runtime = AgentRuntime(client, RunStore(resources.ctx), own.temporal.task_queue)
            async with make_worker(client, resources, own):
                run_id = await runtime.start("support", "Please refund order 1042")
                waiting = await until_status(runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
                proc = _spawn(env, tmp_path)
                try:
                    assert await _gauge(metrics_port, proc) == 1
                    queue = own.temporal.task_queue
                    polled = f'{POLLERS}kind="workflow",task_queue="{queue}"}} '
                    assert await _gauge(metrics_port, proc, polled) == 1
                    dead = "agentrt_push_last_dead_letter_timestamp_seconds "
                    assert await _gauge(metrics_port, proc, dead) == 0
                    assert waiting.pending_approval is not None
                    await runtime.approve(
                        run_id, approved=True, decided_by="bob",
                        turn_digest=waiting.pending_approval.turn_digest,
                    )  # fmt: skip
                    assert (await runtime.result(run_id)).status is RunStatus.COMPLETED
                    assert await _gauge(metrics_port, proc) == 0
                    # `agentrt-api serve` measures its requests, by route template.
                    async with httpx.AsyncClient(timeout=5) as http:
                        run = await http.get(f"http://127.0.0.1:{api_port}/runs/{run_id}")
                        assert run.status_code == 401  # no token: refused, and counted
                        text = (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text
                    assert (
                        'agentrt_api_requests_total{method="GET",route="/runs/{run_id}",'
                        'status="401"} 1.0' in text
                    )
                    assert run_id not in text and "agentrt_store_up 1.0" in text
                finally:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=20)
    err = (tmp_path / "api.log").read_text()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and all(json.loads(ln)["level"] for ln in lines), err
