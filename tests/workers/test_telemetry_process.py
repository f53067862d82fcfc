"""A real `agentrt-worker` process with every telemetry option on: JSON logs at INFO, both
metrics ports, OTLP/HTTP traces to a collector on loopback. Its prompt, its tool's
arguments and a secret carry a unique marker that must appear nowhere: not in the log,
not in an exported span."""

import asyncio
import json
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.devserver import free_port
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.workers._proc import WorkerPool, worker_env

MARKER = f"zq{uuid.uuid4().hex[:12]}"
RULES = f"""default_reply: nothing to do
rules:
- name: marked
  match:
    contains: {MARKER}
  steps:
  - tool_calls:
    - name: set_record
      arguments:
        key: note:{MARKER}
        value: arg-{MARKER}
  - text: Noted.
"""


class Collector(ThreadingHTTPServer):
    bodies: list[bytes]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/v1/traces":
            self.server.bodies.append(body)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector(("127.0.0.1", 0), _Handler)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _env(settings: Settings, temporal: WorkflowEnvironment, queue: str) -> dict[str, str]:
    address = temporal.client.service_client.config.target_host
    return worker_env(settings, temporal_address=address, task_queue=queue)


@pytest.mark.timeout(120)
async def test_a_worker_process_logs_json_traces_and_metrics_without_content(
    pool: WorkerPool,
    collector: Collector,
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    parts: WorkerResources,
    task_queue: str,
    tmp_path: Path,
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    ours, sdk = free_port(), free_port()
    secret = f"sk-{MARKER}"
    env = _env(settings, temporal_env, task_queue)
    env.update(
        AGENTRT_RULES_FILE=str(rules),
        AGENTRT_LOG_FORMAT="json",
        AGENTRT_METRICS_PORT=str(ours),
        AGENTRT_TEMPORAL_METRICS_PORT=str(sdk),
        AGENTRT_OTLP_ENDPOINT=f"http://127.0.0.1:{collector.server_port}",
        AGENTRT_OPENAI_API_KEY=secret,
    )
    worker = pool.spawn(env)
    runtime = AgentRuntime(temporal_env.client, RunStore(parts.ctx), task_queue)
    # Accepted: the run waits in Temporal for the worker process to start.
    run_id = await runtime.start("auto", f"Please add a note {MARKER} to order 7", wait="accepted")
    view = await asyncio.wait_for(runtime.result(run_id), 60)
    assert view.status is RunStatus.COMPLETED, worker.log_tail()

    async with httpx.AsyncClient(timeout=5) as http:
        mine = (await http.get(f"http://127.0.0.1:{ours}/metrics")).text
        theirs = (await http.get(f"http://127.0.0.1:{sdk}/metrics")).text
    assert 'agentrt_runs_ended_total{outcome="COMPLETED",reason="answered"} 1.0' in mine
    assert 'agentrt_runs_started_total{profile="auto"} 1.0' in mine
    # The SDK's own metrics, labelled with this worker's queue.
    sdk_lines = [ln for ln in theirs.splitlines() if f'task_queue="{task_queue}"' in ln]
    assert any(ln.startswith("temporal_activity_execution_latency") for ln in sdk_lines), theirs
    assert any(ln.startswith("temporal_workflow_completed") for ln in sdk_lines), theirs

    worker.stop()  # a graceful stop flushes the batched spans
    assert worker.proc.returncode == 0, worker.log_tail()

    # Traces: the worker's activity, model and tool spans reached the collector.
    assert collector.bodies, "no span was exported"
    names: set[str] = set()
    for body in collector.bodies:
        assert MARKER.encode() not in body
        req = ExportTraceServiceRequest.FromString(body)
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                names.update(s.name for s in ss.spans)
    assert {"RunActivity:model.complete", "model scripted", "tool set_record"} <= names, names

    # Logs: one JSON object a line; Temporal code's lines carry the run's ids as fields.
    text = worker.log.read_text()
    assert MARKER not in text  # neither the prompt, nor the arguments, nor the secret
    assert settings.read_seal_keys().split(":", 1)[1] not in text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    # activity.logger, workflow.logger and a tool's ctx.logger (the SDK's worker lines,
    # e.g. its shutdown, are about no run).
    temporal = [
        ln for ln in lines if ln["logger"] in ("temporalio.activity", "temporalio.workflow")
    ]
    about_run = [ln for ln in temporal if ln.get("run_id") == run_id]
    assert about_run, lines
    for ln in temporal:
        assert ln["run_id"] == ln["workflow_id"] and ln["workflow_run_id"], ln
        assert "{'" not in ln["message"]  # the ids are fields, not a dict in the text
    assert {ln["level"] for ln in lines} <= {"INFO", "WARNING", "ERROR"}


@pytest.mark.parametrize("setting", ["AGENTRT_METRICS_PORT", "AGENTRT_TEMPORAL_METRICS_PORT"])
def test_a_metrics_port_in_use_stops_the_worker_at_start(
    setting: str, settings: Settings, temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    env = _env(settings, temporal_env, f"tq-{uuid.uuid4().hex[:8]}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        env[setting] = str(taken.getsockname()[1])
        if setting == "AGENTRT_TEMPORAL_METRICS_PORT":
            env["AGENTRT_METRICS_PORT"] = str(free_port())
        done = subprocess.run(
            [sys.executable, "-m", "agentrt.workers"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("agentrt-worker:")]
    assert len(errors) == 1 and f"{setting}:" in errors[0], done.stderr
    assert "in use" in errors[0] and "Traceback" not in done.stderr
