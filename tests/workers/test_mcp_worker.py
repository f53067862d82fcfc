"""MCP tools in real agent runs through the Temporal dev server: a read over stdio, an
approved write over streamable HTTP, and a worker SIGKILLed after a write's claim, with the
MCP server's own write log as the ground truth of how often the write ran."""

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.activities.toolbox.box import Toolbox
from agentrt.activities.toolbox.mcp import open_mcp_toolboxes
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.enums import EventKind, Outcome, PendingState, RunStatus, TerminationReason
from agentrt.contracts.ids import idempotency_key
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from agentrt.workers.main import make_worker
from tests.activities.mcp_servers import HttpMcpServer, start_http_server, stdio_server, writes
from tests.workers._proc import WorkerPool, wait_for_marker, worker_env

PROMPT = "Please charge acme"
PROFILES = {
    "profiles": [
        {"name": "mcp-support", "instructions": "Use the shop and the CRM.",
         "model": "scripted:demo", "tools": ["shop.lookup", "crm.charge"], "approval": "writes"},
        {"name": "mcp-fast", "instructions": "Fault tests.", "model": "scripted:demo",
         "tools": ["shop.lookup", "crm.charge"], "approval": "none",
         "timeouts": {"write_seconds": 20, "write_heartbeat_seconds": 3,
                      "schedule_to_start_seconds": 10}},
    ]
}  # fmt: skip
RULES = {
    "rules": [
        {"name": "charge", "match": {"contains": "charge acme"}, "steps": [
            {"tool_calls": [{"name": "shop.lookup", "arguments": {"item": "acme"}}]},
            {"tool_calls": [{"name": "crm.charge", "arguments": {"account": "acme", "amount": 5}}]},
            {"text": "Charged acme."},
        ]},
    ]
}  # fmt: skip


@pytest.fixture
def crm(tmp_path: Path) -> Iterator[HttpMcpServer]:
    server = start_http_server(tmp_path, tmp_path / "crm-writes.jsonl")
    yield server
    server.stop()


@pytest.fixture
def mcp_settings(settings: Settings, tmp_path: Path, crm: HttpMcpServer) -> Settings:
    files = {"profiles.yaml": PROFILES, "rules.yaml": RULES, "mcp.yaml": {"servers": [
        stdio_server("shop", tmp_path / "shop-writes.jsonl"), crm.config("crm"),
    ]}}  # fmt: skip
    for name, data in files.items():
        (tmp_path / name).write_text(yaml.safe_dump(data))
    return settings.replace(
        worker={
            "profiles_file": tmp_path / "profiles.yaml",
            "mcp_servers_file": tmp_path / "mcp.yaml",
        },
        providers={"rules_file": tmp_path / "rules.yaml"},
        temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
    )


def _tool_events(events: list[Any], tool: str) -> list[Any]:
    return [e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == tool]


@pytest.mark.timeout(90)
async def test_an_agent_reads_over_mcp_and_an_approved_mcp_write_runs_once(
    client: Client, mcp_settings: Settings, crm: HttpMcpServer
) -> None:
    assert mcp_settings.worker.mcp_servers_file is not None
    boxes, close = await open_mcp_toolboxes(load_mcp_config(mcp_settings.worker.mcp_servers_file))
    parts = build(mcp_settings, toolboxes=[Toolbox(name, tools) for name, tools in boxes])
    try:
        async with make_worker(client, parts, mcp_settings):
            runtime = AgentRuntime(client, RunStore(parts.ctx), mcp_settings.temporal.task_queue)
            waiting = await runtime.run("mcp-support", PROMPT, initiator="alice")
            assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
            pending = waiting.pending_approval
            assert pending is not None and [c.name for c in pending.calls] == ["crm.charge"]
            assert writes(crm.counter) == []  # nothing runs before the decision
            await runtime.approve(
                waiting.run_id, approved=True, decided_by="bob", turn_digest=pending.turn_digest
            )
            done = await asyncio.wait_for(runtime.result(waiting.run_id), 30)
            events = await runtime.events(done.run_id)
    finally:
        parts.close()
        await close()
    assert done.status is RunStatus.COMPLETED and done.answer == "Charged acme."
    [read] = _tool_events(events, "shop.lookup")
    assert read.payload["result"] == "item acme: in stock" and read.payload["effect"] == "READ_ONLY"
    [write] = _tool_events(events, "crm.charge")
    assert write.payload["effect"] == "NON_IDEMPOTENT_WRITE" and not write.payload["is_error"]
    call_id = pending.calls[0].call_id
    assert writes(crm.counter) == [
        {"tool": "charge", "args": {"account": "acme", "amount": 5},
         "key": idempotency_key(done.run_id, call_id)},
    ]  # fmt: skip


def _env(settings: Settings, env: WorkflowEnvironment, **extra: Any) -> dict[str, str]:
    out = worker_env(
        settings,
        temporal_address=env.client.service_client.config.target_host,
        task_queue=settings.temporal.task_queue,
        **extra,
    )
    out["AGENTRT_MCP_SERVERS_FILE"] = str(settings.worker.mcp_servers_file)
    return out


# Claimed, not yet sent: nobody can know that, so the run fails closed and nothing ran.
# Sent and done, step not recorded: the run fails closed and the charge is not repeated.
@pytest.mark.timeout(150)
@pytest.mark.parametrize(
    ("point", "charges"), [("write.after_claim", 0), ("write.after_effect", 1)]
)
async def test_a_worker_killed_after_the_claim_charges_at_most_once(
    point: str,
    charges: int,
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    client: Client,
    runs: RunStore,
    mcp_settings: Settings,
    crm: HttpMcpServer,
    tmp_path: Path,
) -> None:
    markers = tmp_path / "markers"
    faulty = pool.spawn(_env(mcp_settings, temporal_env, block_at=point, marker_dir=markers))
    runtime = AgentRuntime(client, runs, mcp_settings.temporal.task_queue)
    # Accepted, not begun: the worker process (and its MCP connections) may take longer to
    # start on a loaded machine than the start's own bound, which is not under test here.
    run_id = await runtime.start("mcp-fast", PROMPT, wait="accepted")
    await wait_for_marker(markers / point, faulty, within=90.0)
    faulty.kill()
    fresh = pool.spawn(_env(mcp_settings, temporal_env))
    try:
        view = await asyncio.wait_for(runtime.result(run_id), 60)
    except TimeoutError:
        raise AssertionError(f"run did not settle:\n{fresh.log_tail()}") from None

    done = writes(crm.counter)
    assert len(done) <= 1, f"the charge ran {len(done)} times"
    assert len(done) == charges
    assert view.status is RunStatus.FAILED and view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert view.pending_effect is not None and view.pending_effect.tool == "crm.charge"
    assert view.pending_effect.state is PendingState.OUTCOME_UNKNOWN
    events = await runtime.events(run_id)
    assert len(_tool_events(events, "shop.lookup")) == 1  # the read before it went through
    assert _tool_events(events, "crm.charge") == []  # never recorded: outcome unknown
    assert "Traceback" not in fresh.log_tail(400)


@pytest.mark.timeout(60)
def test_a_worker_with_an_unset_header_variable_stops_at_start_with_one_line(
    settings: Settings, tmp_path: Path
) -> None:
    server = {"name": "crm", "transport": "http", "url": "http://127.0.0.1:9/mcp",
              "headers_from_env": {"Authorization": "AGENTRT_TEST_CRM_TOKEN"}}  # fmt: skip
    (tmp_path / "mcp.yaml").write_text(yaml.safe_dump({"servers": [server]}))
    env = worker_env(settings, temporal_address="127.0.0.1:9", task_queue="unused")
    env.pop("AGENTRT_TEST_CRM_TOKEN", None)
    env["AGENTRT_MCP_SERVERS_FILE"] = str(tmp_path / "mcp.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt.workers"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=45,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "AGENTRT_TEST_CRM_TOKEN" in proc.stderr
    assert "Traceback" not in proc.stderr
