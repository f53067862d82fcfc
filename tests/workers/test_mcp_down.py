"""Issue 28: a tool server that is down is a degraded tool, not a dead worker. The worker
starts while its MCP server (a real one, the `mcp` SDK over HTTP on 127.0.0.1) is down; a
run that calls the server's tool meanwhile gets a refusal as its result, not a crash; the
gauge says the server is down; then the server comes up and the next run uses its tool,
with no worker restart. The worker says at start what it loaded (issue 40 item 4) and
reports who polls its queue (the pollers gauge)."""

import asyncio
import time
import uuid
from pathlib import Path

import httpx
import pytest
import yaml
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.activities.toolbox.mcp_servers import McpServers
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.profiles import Profile
from agentrt.core.devserver import free_port
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._entry import run_module
from tests.activities.mcp_servers import start_http_server
from tests.workers._proc import WorkerPool, worker_env

PROMPT = "Is the widget in stock?"
# With another tool offered, the scripted model calls crm.lookup whether or not it is
# offered: what a model that names a tool it was not given does.
TOOLS = ["crm.lookup", "lookup_order"]
PROFILES = {"profiles": [{"name": "stock", "model": "scripted:demo", "tools": TOOLS}]}
RULES = {"rules": [{"name": "stock", "match": {"contains": "widget"}, "steps": [
    {"tool_calls": [{"name": "crm.lookup", "arguments": {"item": "widget"}}]},
    {"text": "done"},
]}]}  # fmt: skip


def _up_gauge(metrics_port: int) -> str:
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return next(line for line in text.splitlines() if line.startswith("agentrt_mcp_server_up"))


async def _lookup(runtime: AgentRuntime) -> tuple[RunStatus, dict[str, object]]:
    view = await asyncio.wait_for(runtime.run("stock", PROMPT, initiator="alice"), 60)
    events = await runtime.events(view.run_id)
    calls = [e for e in events if e.kind is EventKind.TOOL]
    assert len(calls) == 1, (view, [(e.kind, e.payload) for e in events])
    [call] = calls
    return view.status, call.payload


@pytest.mark.timeout(180)
async def test_a_worker_starts_with_its_mcp_server_down_and_serves_it_once_it_is_up(
    temporal_env: WorkflowEnvironment,
    client: Client,
    settings: Settings,
    parts: WorkerResources,
    pool: WorkerPool,
    tmp_path: Path,
) -> None:
    port, metrics_port = free_port(), free_port()
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    files = {"profiles.yaml": PROFILES, "rules.yaml": RULES, "mcp.yaml": {"servers": [
        {"name": "crm", "transport": "http", "url": f"http://127.0.0.1:{port}/mcp"},
    ]}}  # fmt: skip
    for name, data in files.items():
        (tmp_path / name).write_text(yaml.safe_dump(data))
    env = worker_env(
        settings,
        temporal_address=temporal_env.client.service_client.config.target_host,
        task_queue=queue,
    )
    env.update(
        AGENTRT_PROFILES_FILE=str(tmp_path / "profiles.yaml"),
        AGENTRT_RULES_FILE=str(tmp_path / "rules.yaml"),
        AGENTRT_MCP_SERVERS_FILE=str(tmp_path / "mcp.yaml"),
        AGENTRT_MCP_RETRY_MAX_SECONDS="1",
        AGENTRT_METRICS_PORT=str(metrics_port),
    )
    # --check agrees: the worker would start, without the server's tools for now.
    checked = run_module("agentrt.workers", ("--check",), env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert f"MCP server crm: http http://127.0.0.1:{port}/mcp, DOWN (" in checked.stdout
    worker = pool.spawn(env)
    deadline = time.monotonic() + 60
    while "worker polling" not in worker.log.read_text():  # it started, the server down
        assert worker.alive() and time.monotonic() < deadline, worker.log_tail()
        await asyncio.sleep(0.2)
    runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
    # What it loaded, said at start: one line each (issue 40 item 4).
    started = worker.log.read_text()
    assert "loaded toolboxes: demo (lookup_order, set_record, issue_refund)" in started, started
    assert "MCP servers: crm DOWN, retried in the background (" in started
    assert "model providers: scripted" in started and "profiles served: stock" in started

    status, call = await _lookup(runtime)  # the server is down: the tool is not offered
    assert worker.alive(), worker.log_tail()
    assert status is RunStatus.COMPLETED
    assert call["is_error"] and "not available" in str(call["result"])
    assert _up_gauge(metrics_port) == 'agentrt_mcp_server_up{server="crm"} 0.0'
    assert "MCP server crm is down" in worker.log.read_text()

    server = start_http_server(tmp_path, tmp_path / "crm-writes.jsonl", port=port)
    try:
        deadline = time.monotonic() + 30
        while _up_gauge(metrics_port).endswith(" 0.0"):
            assert time.monotonic() < deadline, worker.log_tail()
            await asyncio.sleep(0.2)
        status, call = await _lookup(runtime)  # the same worker, no restart
    finally:
        server.stop()
    assert status is RunStatus.COMPLETED
    assert not call["is_error"] and call["result"] == "item widget: in stock"
    assert worker.alive() and "MCP server crm is up: " in worker.log.read_text()
    # The worker reports who polls its task queue (itself), read from Temporal in the
    # background: the AgentrtTaskQueueNoPoller alert's input.
    polled = f'agentrt_task_queue_pollers{{kind="workflow",task_queue="{queue}"}} 1.0'
    deadline = time.monotonic() + 45
    async with httpx.AsyncClient(timeout=5) as http:
        while polled not in (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text:
            assert time.monotonic() < deadline, worker.log_tail()
            await asyncio.sleep(0.5)


async def test_an_unknown_tool_of_a_server_that_is_up_is_still_refused(tmp_path: Path) -> None:
    """Down, a server's tools are unknown: a profile naming one is not refused, the tool
    is left out of its runs. Up, a tool the server lacks is the usual ConfigError."""
    port = free_port()
    path = tmp_path / "mcp.yaml"
    path.write_text(yaml.safe_dump({"servers": [
        {"name": "crm", "transport": "http", "url": f"http://127.0.0.1:{port}/mcp"},
    ]}))  # fmt: skip
    wants = {"p": Profile(name="p", model="scripted:demo", tools=["crm.lookup", "crm.nosuch"])}
    down = await McpServers(load_mcp_config(path)).open()
    try:
        assert list(down.down()) == ["crm"] and down.status() == {"crm": False}
        registry = ToolRegistry(groups=dict(down.boxes()), pending=down.down())
        catalog = ProfileCatalog(wants, registry)  # not refused
        resolved = catalog.get("p")
        assert resolved is not None and resolved.tools == []  # nothing offered yet
    finally:
        await down.close()
    server = start_http_server(tmp_path, tmp_path / "w.jsonl", port=port)
    up = await McpServers(load_mcp_config(path)).open()
    try:
        assert up.status() == {"crm": True}
        registry.add_group("crm", dict(up.boxes())["crm"])  # it came up: offered from now
        with pytest.raises(ConfigError, match="names tools other toolboxes have"):
            registry.add_group("crm2", dict(up.boxes())["crm"])  # all or none: none added
        assert registry.group("crm2") is None
        resolved = catalog.get("p")
        assert resolved is not None and resolved.tools == ["crm.lookup"]
        with pytest.raises(ConfigError, match=r"names unknown tools: \['crm.nosuch'\]"):
            ProfileCatalog(wants, ToolRegistry(groups=dict(up.boxes())))
    finally:
        await up.close()
        server.stop()
