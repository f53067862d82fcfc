"""MCP writes and their probes, in a real run against a real MCP server (a stdio child,
tests/fence/mcp_ledger.py) whose ledger file is the ground truth of every refund."""

import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client

from agentrt import RunStatus, Settings, TerminationReason, Toolbox
from agentrt.activities.toolbox.mcp import flatten, open_mcp_toolboxes
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.enums import EventKind, PendingState
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.ids import ACT_WRITE_EXECUTE
from agentrt.contracts.views import EventView, RunView
from agentrt.workflows.fence import WRITE_HEADROOM_SECONDS
from tests._rules import Scripted, new_queue, one_call, scripted_profile, scripted_worker
from tests.fence.mcp_ledger import rows
from tests.workflows._replay import fetch

ROOT = Path(__file__).resolve().parents[2]
RULES = one_call(
    "refund", "shop.refund", {"order": "o-9", "cents": 250}, "Refund handled.", "I only refund."
)


def _server(ledger: Path, mode: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "shop",
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", "tests.fence.mcp_ledger", "--ledger", str(ledger)],
        "cwd": str(ROOT),
        "env": {"LEDGER_MODE": mode},
        **extra,
    }


def _file(tmp_path: Path, server: dict[str, Any]) -> Path:
    path = tmp_path / f"mcp-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump({"servers": [server]}))
    return path


@asynccontextmanager
async def _runtime(
    client: Client, settings: Settings, tmp_path: Path, server: dict[str, Any]
) -> AsyncIterator[Scripted]:
    boxes, close = await open_mcp_toolboxes(load_mcp_config(_file(tmp_path, server), {}))
    profile = scripted_profile("refunder", "You refund.", "shop", new_queue())
    try:
        toolboxes = [Toolbox(name, tools) for name, tools in boxes]
        async with scripted_worker(client, settings, tmp_path, profile, toolboxes, RULES) as w:
            yield w
    finally:
        await close()


def _calls(ledger: Path) -> list[str]:
    path = ledger.with_suffix(".calls")
    return [json.loads(line)["key"] for line in path.read_text().splitlines() if line]


PROBED = {"reconcile": {"refund": "refund_status"}}


async def _refund_probed(
    client: Client, settings: Settings, tmp_path: Path, ledger: Path, mode: str
) -> tuple[RunView, EventView]:
    """Run a refund on a server in `mode` whose refund has its probe: the run's view and
    its one TOOL event."""
    async with _runtime(client, settings, tmp_path, _server(ledger, mode, **PROBED)) as w:
        view = await w.runtime.run(w.profile, "Please refund o-9")
        events = await w.runtime.events(view.run_id)
    [step] = [e for e in events if e.kind is EventKind.TOOL]
    return view, step


async def test_an_mcp_write_that_errs_after_applying_is_found_applied_by_its_probe(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    view, step = await _refund_probed(client, settings, tmp_path, ledger, "fail_after")
    assert view.status is RunStatus.COMPLETED and view.answer == "Refund handled."
    assert view.pending_effect is None
    assert step.payload["reconciled"] is True and step.payload["is_error"] is False
    assert step.payload["result"] == "refunded 250 cents on order o-9 (ledger)"
    [row] = rows(ledger)  # exactly one refund
    assert row["key"] == f"{view.run_id}/{step.payload['call_id']}"


async def test_an_mcp_write_lost_once_runs_again_with_the_same_key_and_applies_once(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    view, step = await _refund_probed(client, settings, tmp_path, ledger, "lose_first")
    assert view.status is RunStatus.COMPLETED, view
    assert step.payload["result"] == "refunded 250 cents on order o-9"
    assert "reconciled" not in step.payload  # the re-run's own result
    key = f"{view.run_id}/{step.payload['call_id']}"
    assert _calls(ledger) == [key, key]  # two calls, one key
    assert [r["key"] for r in rows(ledger)] == [key]  # one refund


async def test_an_mcp_error_means_not_applied_only_where_the_servers_file_says_so(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    said = _server(ledger, "refuse", errors_not_applied=["refund"])
    async with _runtime(client, settings, tmp_path, said) as (runtime, runs, profile, _):
        view = await runtime.run(profile, "Please refund o-9")
        [message] = [m for m in runs.transcript(view.run_id) if m.role == "tool"]
    assert view.status is RunStatus.COMPLETED and view.pending_effect is None
    assert message.is_error and message.content.startswith("shop.refund failed: ")
    assert "cannot be refunded now" in message.content

    unsaid = _server(tmp_path / "ledger2.jsonl", "refuse")
    async with _runtime(client, settings, tmp_path, unsaid) as (runtime, _, profile, _):
        failed = await runtime.run(profile, "Please refund o-9")
    assert failed.status is RunStatus.FAILED
    assert failed.termination_reason is TerminationReason.INTERRUPTED_WRITE
    assert failed.pending_effect is not None
    assert failed.pending_effect.state is PendingState.OUTCOME_UNKNOWN
    assert rows(ledger) == [] and rows(tmp_path / "ledger2.jsonl") == []


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"reconcile": {"refund": "no_such_tool"}}, r"unknown tool\(s\): \['no_such_tool'\]"),
        ({"errors_not_applied": ["nope"]}, r"unknown tool\(s\): \['nope'\]"),
        ({"reconcile": {"refund_status": "refund_status"}}, "only a non-idempotent write"),
        ({"reconcile": {"refund": "refund"}}, "its probe 'refund' must be READ_ONLY"),
        ({"attempt_seconds": {"nope": 2}}, r"unknown tool\(s\): \['nope'\]"),
        ({"attempt_seconds": {"refund_status": 2}}, "only a non-idempotent write takes"),
    ],
)
async def test_a_bad_probe_entry_is_a_config_error_at_start(
    tmp_path: Path, extra: dict[str, Any], needle: str
) -> None:
    path = tmp_path / "mcp.yaml"
    path.write_text(yaml.safe_dump({"servers": [_server(tmp_path / "l.jsonl", "ok", **extra)]}))
    with pytest.raises(ConfigError, match=needle):
        await open_mcp_toolboxes(load_mcp_config(path, {}))


async def test_the_probe_is_named_on_the_tool_spec(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    path.write_text(yaml.safe_dump({"servers": [_server(tmp_path / "l.jsonl", "ok", **PROBED)]}))
    boxes, close = await open_mcp_toolboxes(load_mcp_config(path, {}))
    try:
        tools = {t.spec.name: t for t in flatten(boxes)}
    finally:
        await close()
    assert tools["shop.refund"].spec.reconcile == "shop.refund_status"
    assert tools["shop.refund_status"].spec.reconcile is None
    assert "reconcile" not in tools["shop.refund"].spec.model_dump()  # never sent to a model


async def test_a_write_declares_its_attempt_bound_in_the_servers_file(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """The bound reaches the run's plan, and with it the write's time bound: the bound and
    the headroom (workflows/fence.py), not the profile's write_seconds (60 s)."""
    ledger = tmp_path / "ledger.jsonl"
    server = _server(ledger, "ok", attempt_seconds={"refund": 2}, **PROBED)
    async with _runtime(client, settings, tmp_path, server) as w:
        view = await w.runtime.run(w.profile, "Please refund o-9")
        history = await fetch(client, view.run_id)
    assert view.status is RunStatus.COMPLETED and len(rows(ledger)) == 1
    [write] = [
        e.activity_task_scheduled_event_attributes
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == ACT_WRITE_EXECUTE
    ]
    assert write.start_to_close_timeout.ToTimedelta() == timedelta(
        seconds=2 + WRITE_HEADROOM_SECONDS
    )
    with pytest.raises(ConfigError, match="greater than 0"):  # a positive bound
        load_mcp_config(_file(tmp_path, {**server, "attempt_seconds": {"refund": 0}}), {})
