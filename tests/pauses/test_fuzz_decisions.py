"""A seeded slice of the fuzz job's approval surface (bench/fuzz_temporal.py): generated
decisions sent as the `approve` signal and as the `decide` update to runs waiting for
approval. Every one is refused, leaves the run on the same turn with the same rows, and
logs no traceback."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.worker import Worker

from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import SIGNAL_APPROVE, SIGNAL_CANCEL, UPDATE_DECIDE
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from agentrt.workflows.pauses_gate import ApprovalGate
from bench.fuzz import waiting_runs
from bench.fuzz_core import LogTrap
from bench.fuzz_temporal import decisions_surface
from tests._fuzz import fuzz_slice

CASES = 40


async def test_a_signal_that_is_not_a_decision_is_refused_in_one_line(
    client: Client, worker: Worker, runtime: AgentRuntime
) -> None:
    # Found by the fuzz job: the SDK dropped it with a logged traceback.
    (run_id, digest), *_ = (await waiting_runs(runtime, 1, profile="support")).items()
    handle = client.get_workflow_handle(run_id)
    with LogTrap() as trap:
        await handle.signal(SIGNAL_APPROVE, ["not", "a", "decision"])
        await handle.signal(SIGNAL_APPROVE, {"approved": True})
        # A JSON null decoded to None and failed the workflow task (the run was stuck).
        await handle.signal(SIGNAL_APPROVE, None)
        await handle.signal(SIGNAL_CANCEL, None)
        # A digest with non-ASCII characters raised TypeError in hmac.compare_digest.
        await handle.signal(
            SIGNAL_APPROVE, {"approved": True, "decided_by": "x", "turn_digest": "é"}
        )
        for payload in (None, {"approved": True, "decided_by": "x", "turn_digest": "nope"}):
            # An update after the signals is handled after them; each is refused.
            with pytest.raises(WorkflowUpdateFailedError):
                await handle.execute_update(
                    UPDATE_DECIDE, payload, rpc_timeout=timedelta(seconds=10)
                )
    assert trap.tracebacks == []
    assert (await handle.describe()).status is WorkflowExecutionStatus.RUNNING
    view = await runtime.status(run_id)
    assert view.pending_approval is not None and view.pending_approval.turn_digest == digest


def test_the_gate_refuses_a_non_ascii_digest_as_stale() -> None:
    gate = ApprovalGate()
    gate.open(PendingApproval(turn_digest="a" * 64, round=1, requested_at=datetime.now(UTC)))
    decision = ApprovalDecision(approved=True, decided_by="ops", turn_digest="\u00e9\u00e8")
    assert gate.check(decision) == ErrorType.STALE_TURN.value
    assert not gate.accept(decision) and gate.decision is None


async def test_fuzzed_decisions_by_signal_and_update_are_refused_and_change_nothing(
    client: Client, worker: Worker, runtime: AgentRuntime, parts: WorkerResources
) -> None:
    runs = await waiting_runs(runtime, 2, profile="support")
    loop = asyncio.get_running_loop()
    for t in await fuzz_slice(decisions_surface, client, loop, parts.engine, runs, cases=CASES):
        assert t.rejected == CASES, t
