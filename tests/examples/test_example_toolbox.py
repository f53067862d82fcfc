"""The example plug-in package (examples/agentrt-example-toolbox) as a user installs it: pip
puts it into a virtualenv of its own, and a worker started from that environment, with the
example's profiles.yaml, rules.yaml and mcp.yaml unchanged, finds its toolbox and its model
provider through the entry points and starts its MCP server with `python -m ...`.

The environment borrows the suite's packages (a `.pth` file) and installs only the example,
with --no-deps --no-build-isolation: offline, a few seconds, and the suite's own venv is
never touched (the test checks it cannot see the example). What this proves is discovery
through importlib.metadata of a real install; the fresh-venv wheel test (test_packaging.py)
is the one that proves agentrt's own dependencies are complete.
"""

import asyncio
import importlib.metadata
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt import AgentRuntime, RunStatus, Settings, ToolEffect
from agentrt.contracts.enums import EventKind
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.views import RunView
from agentrt.store.runs.record import RunStore
from tests.workers._proc import WorkerPool, WorkerProcess, worker_env
from tests.workflows._waiting import until_polled

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agentrt-example-toolbox"
DIST = "agentrt-example-toolbox"
PROMPT = "Please order 2 widget to Berlin"


@dataclass(frozen=True)
class ExampleEnv:
    python: Path  # the environment's interpreter, and `python` on the worker's PATH
    site_packages: Path


@pytest.fixture(scope="module")
def example_env(tmp_path_factory: pytest.TempPathFactory) -> ExampleEnv:
    root = tmp_path_factory.mktemp("example-env")
    # Built from a copy: an in-tree build would leave build/ and *.egg-info in the checkout.
    src = root / "src"
    shutil.copytree(
        EXAMPLE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    )
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    # addsitedir, not a bare path: the suite's own .pth files (agentrt's editable finder) run.
    suite = sysconfig.get_paths()["purelib"]
    (site / "_agentrt_suite.pth").write_text(f"import site; site.addsitedir({suite!r})\n")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "--no-deps", "--no-build-isolation", "--no-index", "--target", str(site), str(src)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, f"pip could not install the example:\n{done.stderr}"
    return ExampleEnv(python=python, site_packages=site)


def _spawn(
    pool: WorkerPool, env: ExampleEnv, settings: Settings, temporal: WorkflowEnvironment
) -> tuple[WorkerProcess, str]:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    s = settings.replace(
        worker={"profiles_file": EXAMPLE / "profiles.yaml"},
        providers={"rules_file": EXAMPLE / "rules.yaml"},
    )
    environ = worker_env(
        s, temporal_address=temporal.client.service_client.config.target_host, task_queue=queue
    )
    environ["AGENTRT_MCP_SERVERS_FILE"] = str(EXAMPLE / "mcp.yaml")
    # mcp.yaml says `command: python`: the environment's, as in an activated venv.
    environ["PATH"] = f"{env.python.parent}{os.pathsep}{environ.get('PATH', '')}"
    return pool.spawn(environ, python=str(env.python)), queue


@dataclass(frozen=True)
class Shop:
    """A worker started from the example's environment, and a runtime on its queue."""

    worker: WorkerProcess
    runtime: AgentRuntime
    queue: str
    client: Client

    async def start(self) -> tuple[str, RunView]:
        """Start the shop run; return it once it first settles (at its first approval)."""
        # Once the worker serves (it starts its MCP server first; on a loaded machine that
        # took longer than a start waits for a worker).
        await until_polled(self.client, self.queue)
        run_id = await self.runtime.start("shop", PROMPT, initiator="alice")
        try:
            return run_id, await _settled(self.runtime, self.worker, run_id)
        except TimeoutError:
            raise AssertionError(f"the run did not start:\n{self.worker.log_tail()}") from None


@pytest.fixture
def shop(
    example_env: ExampleEnv,
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    runs: RunStore,
    settings: Settings,
) -> Shop:
    worker, queue = _spawn(pool, example_env, settings, temporal_env)
    client = temporal_env.client
    return Shop(worker, AgentRuntime(client, runs, queue), queue, client)


async def _settled(
    runtime: AgentRuntime, worker: WorkerProcess, run_id: str, after: str | None = None
) -> RunView:
    """The run once it is terminal or waits on a decision other than `after`'s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 45
    while True:
        view = await asyncio.wait_for(runtime.wait(run_id), 45)
        pending = view.pending_approval
        if pending is None or pending.turn_digest != after:
            return view
        if loop.time() > deadline or not worker.alive():
            raise AssertionError(f"run stuck at the same approval:\n{worker.log_tail()}")
        await asyncio.sleep(0.1)


async def _decide(runtime: AgentRuntime, view: RunView, tool: str, approved: bool = True) -> str:
    pending = view.pending_approval
    assert view.status is RunStatus.WAITING_FOR_APPROVAL and pending is not None, view
    assert [c.name for c in pending.calls] == [tool]
    reason = None if approved else "not today"
    await runtime.approve(
        view.run_id, approved=approved, decided_by="bob", turn_digest=pending.turn_digest,
        reason=reason,
    )  # fmt: skip
    return pending.turn_digest


def _orders(db: Path) -> list[tuple[Any, ...]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT key, run_id, item, quantity FROM orders").fetchall()


def _shipments(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.timeout(150)
async def test_the_installed_example_runs_its_tools_its_mcp_server_and_its_provider(
    shop: Shop, tmp_path: Path
) -> None:
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution(DIST)  # installed there, not in the suite's venv
    worker, runtime = shop.worker, shop.runtime
    orders, shipments = tmp_path / "example-orders.sqlite3", tmp_path / "example-shipments.jsonl"

    run_id, view = await shop.start()
    assert _orders(orders) == []  # nothing is written before the decision
    digest = await _decide(runtime, view, "place_order")
    view = await _settled(runtime, worker, run_id, after=digest)
    assert len(_orders(orders)) == 1 and _shipments(shipments) == []
    await _decide(runtime, view, "warehouse.book_shipment")
    done = await asyncio.wait_for(runtime.result(run_id), 45)

    assert done.status is RunStatus.COMPLETED, worker.log_tail()
    assert done.answer == "Done: 2 widget ordered and shipped to Berlin, tracking EX-0001."
    events = [e for e in await runtime.events(run_id) if e.kind is EventKind.TOOL]
    steps = {e.payload["tool"]: e.payload for e in events}
    assert list(steps) == [
        "lookup_stock", "warehouse.shipping_quote", "place_order", "warehouse.book_shipment"
    ]  # fmt: skip
    assert steps["lookup_stock"]["result"] == "widget: 12 in stock"
    assert steps["warehouse.shipping_quote"]["result"] == "shipping to Berlin: 4.90 EUR, 2 days"
    assert steps["lookup_stock"]["effect"] == steps["warehouse.shipping_quote"]["effect"]
    assert steps["lookup_stock"]["effect"] == ToolEffect.READ_ONLY.value
    for write in ("place_order", "warehouse.book_shipment"):
        assert steps[write]["effect"] == ToolEffect.NON_IDEMPOTENT_WRITE.value
        assert not steps[write]["is_error"]
    # Each write ran exactly once, with the idempotency key of its own call.
    [order] = _orders(orders)
    assert order == (
        idempotency_key(run_id, steps["place_order"]["call_id"]), run_id, "widget", 2
    )  # fmt: skip
    key = idempotency_key(run_id, steps["warehouse.book_shipment"]["call_id"])
    assert _shipments(shipments) == [
        {"item": "widget", "quantity": 2, "city": "Berlin", "key": key}
    ]

    # The provider plug-in, from the same install: `model: example:echo`.
    echoed = await asyncio.wait_for(runtime.run("echo", "hello there"), 30)
    assert echoed.status is RunStatus.COMPLETED and echoed.answer == "echo: hello there"
    assert "Traceback" not in worker.log_tail(400)


@pytest.mark.timeout(120)
async def test_a_denied_order_is_reported_truthfully_and_writes_nothing(
    shop: Shop, tmp_path: Path
) -> None:
    worker, runtime = shop.worker, shop.runtime
    run_id, view = await shop.start()
    await _decide(runtime, view, "place_order", approved=False)
    done = await asyncio.wait_for(runtime.result(run_id), 45)
    assert done.status is RunStatus.COMPLETED, worker.log_tail()
    assert done.answer == "I did not order anything: Denied by bob: not today"
    assert _orders(tmp_path / "example-orders.sqlite3") == []
    assert _shipments(tmp_path / "example-shipments.jsonl") == []
