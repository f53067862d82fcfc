"""`agentrt approve / deny / cancel / inbox` against the real dev server and database."""

import json

import pytest
from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from tests.starter.test_cli import REFUND, agentrt, assert_clean_error, cli_env  # noqa: F401


@pytest.fixture
async def run_id(
    cli_env: dict[str, str],  # noqa: F811 (the fixture imported above, asked for by name)
    worker: Worker,
    runtime: AgentRuntime,
) -> str:
    """A run waiting for approval, with the CLI's environment set and a worker serving it."""
    view = await runtime.run("support", REFUND, initiator="alice")
    assert view.status is RunStatus.WAITING_FOR_APPROVAL
    return view.run_id


async def test_inbox_then_approve_by_the_pending_digest(
    capsys: pytest.CaptureFixture[str],
    runtime: AgentRuntime,
    parts: WorkerResources,
    run_id: str,
) -> None:
    code, out, _ = await agentrt(capsys, "inbox", "--json")
    assert code == 0
    listed = [json.loads(line) for line in out.splitlines() if line.strip()]
    mine = next(r for r in listed if r["run_id"] == run_id)
    assert mine["pending_approval"]["calls"][0]["name"] == "issue_refund"

    code, out, err = await agentrt(capsys, "approve", run_id, "--by", "bob")
    assert code == 0, err
    done = await runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=run_id) == 1
    decision = next(e for e in await runtime.events(run_id) if e.kind is EventKind.APPROVAL)
    assert (
        # The CLI holds the seal key: its decision is attested (issue 25).
        decision.payload["decided_by"] == "bob"
        and decision.payload["authenticated"] is True
        and decision.payload["approved"] is True
    )

    code, _, err = await agentrt(capsys, "approve", run_id, "--by", "bob")
    assert_clean_error(code, err)


async def test_deny_with_a_reason_and_a_stale_digest(
    capsys: pytest.CaptureFixture[str],
    runtime: AgentRuntime,
    parts: WorkerResources,
    run_id: str,
) -> None:
    code, _, err = await agentrt(capsys, "deny", run_id, "--by", "bob", "--digest", "0" * 64,
                                 "--reason", "stale")  # fmt: skip
    assert_clean_error(code, err)
    assert (await runtime.status(run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    # A denial without a reason is refused before anything is sent (issue 40 item 6).
    for blank in ((), ("--reason", "  ")):
        code, _, err = await agentrt(capsys, "deny", run_id, "--by", "bob", *blank)
        assert_clean_error(code, err)
        assert "a denial needs a reason" in err and "--reason" in err
    assert (await runtime.status(run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    code, _, err = await agentrt(capsys, "deny", run_id, "--by", "bob", "--reason", "too much")
    assert code == 0, err
    done = await runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=run_id) == 0


async def test_cancel_a_waiting_run(
    capsys: pytest.CaptureFixture[str], runtime: AgentRuntime, run_id: str
) -> None:
    code, _, err = await agentrt(capsys, "cancel", run_id, "--by", "ops", "--reason", "dup")
    assert code == 0, err
    done = await runtime.result(run_id)
    assert done.status is RunStatus.CANCELLED
    cancel = next(e for e in await runtime.events(run_id) if e.kind is EventKind.CANCEL)
    assert cancel.payload["by"] == "ops"
    code, _, err = await agentrt(
        capsys, "cancel", "00000000-0000-0000-0000-000000000000", "--by", "ops"
    )
    assert_clean_error(code, err)
