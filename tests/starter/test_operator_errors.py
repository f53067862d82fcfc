"""Errors an operator can act on (issue 9 item 9): a refused decision is a sentence, a
decision refused by signal leaves a trace the sender reads, and a waiting run shows its
iterations and tokens so far."""

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import SelfApprovalError, StaleTurnError
from agentrt.contracts.ids import SIGNAL_APPROVE
from agentrt.starter.facade import AgentRuntime
from tests.starter.test_cli import REFUND, agentrt, assert_clean_error, cli_env  # noqa: F401


async def test_a_refused_decision_is_a_sentence(runtime: AgentRuntime, worker: Worker) -> None:
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    assert waiting.pending_approval is not None
    digest = waiting.pending_approval.turn_digest
    with pytest.raises(StaleTurnError) as stale:
        await runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest="0" * 64)
    text = str(stale.value)
    assert "StaleTurn" not in text
    assert f"is not waiting on turn {'0' * 12}" in text and f"turn {digest[:12]}" in text
    with pytest.raises(SelfApprovalError) as own:
        await runtime.approve(waiting.run_id, approved=True, decided_by="alice", turn_digest=digest)
    assert "alice started run" in str(own.value) and "second person" in str(own.value)
    await runtime.cancel(waiting.run_id, by="test")


async def test_a_decision_refused_by_signal_leaves_a_trace_the_sender_reads(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    assert waiting.pending_approval is not None
    digest = waiting.pending_approval.turn_digest
    handle = client.get_workflow_handle(waiting.run_id)
    assert await runtime.refused_decisions(waiting.run_id) == []
    await handle.signal(
        SIGNAL_APPROVE, ApprovalDecision(approved=True, decided_by="ops", turn_digest="f" * 64)
    )
    await handle.signal(
        SIGNAL_APPROVE, ApprovalDecision(approved=True, decided_by="alice", turn_digest=digest)
    )
    refused = await runtime.refused_decisions(waiting.run_id)
    assert [(r.refusal, r.decided_by) for r in refused] == [
        ("StaleTurn", "ops"),
        ("SelfApproval", "alice"),
    ]
    assert "is not waiting on turn ffffffffffff" in refused[0].message
    assert "second person" in refused[1].message
    # Neither changed the run.
    assert (await runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    await runtime.cancel(waiting.run_id, by="test")


async def test_a_waiting_run_shows_its_iterations_and_tokens_so_far(
    runtime: AgentRuntime, worker: Worker
) -> None:
    waiting = await runtime.run("support", REFUND)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    assert waiting.iterations >= 1
    assert waiting.prompt_tokens > 0 and waiting.completion_tokens > 0
    await runtime.cancel(waiting.run_id, by="test")


@pytest.mark.usefixtures("cli_env")
async def test_cli_refusal_and_waiting_status(
    capsys: pytest.CaptureFixture[str], runtime: AgentRuntime, worker: Worker
) -> None:
    waiting = await runtime.run("support", REFUND)
    code, _, err = await agentrt(
        capsys, "approve", waiting.run_id, "--by", "bob", "--digest", "0" * 64
    )
    assert_clean_error(code, err, "is not waiting on turn 000000000000")
    assert "StaleTurn" not in err
    code, out, _ = await agentrt(capsys, "status", waiting.run_id)
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("tokens"))
    assert waiting.prompt_tokens > 0 and f"{waiting.prompt_tokens} prompt" in line
    await runtime.cancel(waiting.run_id, by="test")
