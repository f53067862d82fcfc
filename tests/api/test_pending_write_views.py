"""Issue 27 item 5: an interrupted write is visible in every run view, with what an operator
needs to ask the target system about it (tool, call id, idempotency key, arguments at the
run's privacy level, fence state and since when), and the run is listed as needing
attention. A pending approval shows each call's effect class. Over real HTTP, a real
Temporal dev server and the suite's database; the write is interrupted after its claim by
the worker's fault hook (an exception there leaves its outcome unknown)."""

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from agentrt.contracts.enums import PendingState, RunStatus, TerminationReason
from agentrt.contracts.ids import idempotency_key
from agentrt.starter.cli import main as cli_main
from agentrt.starter.remote import api_session
from agentrt.store.demo import DemoWorld
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.conftest import UnknownOutcome

MakeLive = Callable[[Callable[[str], None]], AbstractAsyncContextManager[Live]]
ALL = ("runs:start", "runs:read", "runs:decide", "runs:cancel")


async def _interrupted(live: Live, secret: str) -> tuple[str, dict[str, Any]]:
    """A `helper` run (privacy full) whose approved refund is interrupted after its claim:
    (run id, the pending call as the approval showed it)."""
    async with http(live, secret) as client:
        run_id = (await start(client, "helper", REFUND))["run_id"]
        waiting = await wait_status(client, run_id, "WAITING_FOR_APPROVAL")
        pending = waiting["pending_approval"]
        call = pending["calls"][0]
        # The approval shows each call's effect class, as the run's plan recorded it.
        assert call["name"] == "issue_refund" and call["effect"] == "NON_IDEMPOTENT_WRITE"
        decided = await client.post(
            f"/runs/{run_id}/decision",
            json={"verdict": "approve", "turn_digest": pending["turn_digest"]},
        )
        assert decided.status_code == 200, decided.text
        failed = await wait_status(client, run_id, "FAILED", seconds=60)
        assert failed["termination_reason"] == "interrupted_write"
    return run_id, call


@pytest.mark.timeout(180)
async def test_an_interrupted_write_shows_in_the_operator_api_and_the_attention_list(
    make_live: MakeLive,
) -> None:
    async with make_live(UnknownOutcome()) as live:
        who = name("ops")
        secret = token(live, who, *ALL)
        run_id, call = await _interrupted(live, secret)
        async with http(live, secret) as client:
            run = (await client.get(f"/runs/{run_id}")).json()
            listed = (await client.get("/attention", params={"limit": 200})).json()
            # The runs list's filter keeps the same runs as GET /attention.
            filtered = await client.get("/runs", params={"attention": "true", "limit": 200})
            failed = await client.get(
                "/runs", params={"attention": "true", "status": "FAILED", "profile": "helper"}
            )
            others = token(live, name("other"), "runs:read")
            async with http(live, others) as other:
                hidden = (await other.get("/attention", params={"limit": 200})).json()
                hidden_too = (await other.get("/runs", params={"attention": "true"})).json()
    write = run["pending_write"]
    assert write["tool"] == "issue_refund" and write["call_id"] == call["call_id"]
    assert write["idempotency_key"] == idempotency_key(run_id, call["call_id"])
    assert write["state"] == PendingState.OUTCOME_UNKNOWN.value
    assert write["effect"] == "NON_IDEMPOTENT_WRITE"
    assert write["since"] is not None
    assert write["arguments"] == call["arguments"] and write["arguments"]  # privacy full
    assert run["attention"] == "outcome_unknown"
    assert "cost_usd" in run  # the operator API omitted it before
    mine = next(r for r in listed if r["run_id"] == run_id)
    assert mine["pending_write"] == write
    assert [r["run_id"] for r in filtered.json()["runs"]] == [r["run_id"] for r in listed]
    assert [r["run_id"] for r in failed.json()["runs"]] == [run_id]
    assert hidden_too["runs"] == []
    # In words: the write may or may not have happened; ask the target system.
    assert run["failure"]["reason"] == "interrupted_write"
    assert run["failure"]["error_type"] == "OutcomeUnknown"
    assert "idempotency key" in run["failure"]["action"]
    # Visibility holds: a principal without runs:read-all sees only its own runs.
    assert all(r["run_id"] != run_id for r in hidden)
    # Nothing happened on the target: the fault struck before the effect.
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0


@pytest.mark.timeout(180)
async def test_an_interrupted_write_shows_in_the_python_api_the_remote_client_and_the_cli(
    make_live: MakeLive, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with make_live(UnknownOutcome()) as live:
        secret = token(live, name("ops"), *ALL)
        run_id, call = await _interrupted(live, secret)
        key = idempotency_key(run_id, call["call_id"])
        local = await live.runtime.status(run_id)  # the facade, over the store
        async with api_session(live.url, secret) as api:
            remote = await api.status(run_id)  # the remote client, over the operator API
        monkeypatch.setenv("COLUMNS", "250")
        capsys.readouterr()
        code = await asyncio.to_thread(cli_main, ["--api", live.url, "--token", secret,
                                                  "status", run_id])  # fmt: skip
        shown, err = capsys.readouterr()
    assert code == 0, err
    for view in (local, remote):
        assert view.status is RunStatus.FAILED
        assert view.termination_reason is TerminationReason.INTERRUPTED_WRITE
        pe = view.pending_effect
        assert pe is not None
        assert (pe.tool, pe.call_id, pe.idempotency_key) == ("issue_refund", call["call_id"], key)
        assert pe.state is PendingState.OUTCOME_UNKNOWN and pe.since is not None
        assert pe.arguments == call["arguments"] and pe.privacy == "full"
    for text in ("pending write", "issue_refund", call["call_id"], key, "outcome_unknown"):
        assert text in shown, shown
    for value in call["arguments"].values():
        assert str(value) in shown
