"""Decisions that cannot be forged (issue 25, item 2): a decision sent straight through
Temporal (the stock CLI's signal, the `decide` update, Temporal Web) counts only with an
attestation the resume activity opens; otherwise it is refused, recorded as refused, and
the run keeps waiting. A profile with `unattested_decisions: allow` opts back in."""

import asyncio

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from agentrt.contracts.approval import ApprovalDecision, DecisionRefusal
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ErrorType, UnattestedDecisionError
from agentrt.contracts.ids import SIGNAL_APPROVE, UPDATE_DECIDE
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.store.security.attest import attest
from agentrt.workers.compose import WorkerResources
from tests.workflows._waiting import pending_digest, until_status

REFUND = "Please refund order 1042"


async def _refused(runtime: AgentRuntime, run_id: str, n: int = 1) -> list[DecisionRefusal]:
    """The run's refused decisions once there are `n` (bounded wait)."""
    for _ in range(200):
        refused = await runtime.refused_decisions(run_id)
        if len(refused) >= n:
            return refused
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} refused fewer than {n} decisions")


def _kinds(runs: RunStore, run_id: str) -> list[str]:
    return [e.kind.value for e in runs.events(run_id, -1)]


async def test_a_forged_stock_cli_approval_of_a_four_eyes_run_is_refused_and_the_run_waits(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources, runs: RunStore
) -> None:
    """The probe of issue 25: alice starts a four-eyes refund; a signal naming a made-up
    approver used to approve it and run the refund."""
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    forged = ApprovalDecision(approved=True, decided_by="mallory", turn_digest=digest)
    await client.get_workflow_handle(waiting.run_id).signal(SIGNAL_APPROVE, forged)

    refused = await _refused(runtime, waiting.run_id)
    assert [(r.refusal, r.decided_by) for r in refused] == [("UnattestedDecision", "mallory")]
    assert "no valid attestation" in refused[0].message
    view = await runtime.status(waiting.run_id)
    assert view.status is RunStatus.WAITING_FOR_APPROVAL
    assert view.pending_approval is not None and view.pending_approval.turn_digest == digest
    assert EventKind.DECISION_REFUSED.value in _kinds(runs, waiting.run_id)
    assert EventKind.APPROVAL.value not in _kinds(runs, waiting.run_id)
    assert DemoWorld(parts.ctx).ledger_count(run_id=waiting.run_id) == 0

    # The turn is still open: an attested decision by another person approves it.
    await runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
    done = await until_status(runtime, waiting.run_id, RunStatus.COMPLETED)
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
    approval = next(e for e in runs.events(done.run_id, -1) if e.kind is EventKind.APPROVAL)
    assert approval.payload["decided_by"] == "bob" and approval.payload["authenticated"] is True


async def test_an_unattested_decide_update_is_refused_with_a_typed_error_and_changes_nothing(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources, runs: RunStore
) -> None:
    waiting = await runtime.run("support", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    forged = ApprovalDecision(approved=True, decided_by="ops", turn_digest=digest)
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await client.get_workflow_handle(waiting.run_id).execute_update(UPDATE_DECIDE, forged)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == ErrorType.UNATTESTED_DECISION.value
    assert (await runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    assert DemoWorld(parts.ctx).ledger_count(run_id=waiting.run_id) == 0
    assert EventKind.DECISION_REFUSED.value in _kinds(runs, waiting.run_id)
    await runtime.cancel(waiting.run_id, by="test")


async def test_an_attestation_of_another_decider_or_run_does_not_count(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources, runs: RunStore
) -> None:
    """A real attestation replayed for another name, or taken from another run, is refused:
    it seals (run, decider, verdict, digest) together."""
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    handle = client.get_workflow_handle(waiting.run_id)
    # alice's own attested denial, relabelled as an approval by bob.
    sealed = attest(
        runs.sealer, waiting.run_id, principal="alice", approved=False, turn_digest=digest
    )
    relabelled = ApprovalDecision(
        approved=True, decided_by="bob", turn_digest=digest, attestation=sealed
    )
    await handle.signal(SIGNAL_APPROVE, relabelled)
    # (One at a time: while a decision is being checked, the turn counts as decided.)
    await _refused(runtime, waiting.run_id, 1)
    # bob's approval of another run.
    other = attest(runs.sealer, "another-run", principal="bob", approved=True, turn_digest=digest)
    moved = ApprovalDecision(approved=True, decided_by="bob", turn_digest=digest, attestation=other)
    await handle.signal(SIGNAL_APPROVE, moved)

    refused = await _refused(runtime, waiting.run_id, 2)
    assert [r.refusal for r in refused] == ["UnattestedDecision"] * 2
    assert (await runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    assert DemoWorld(parts.ctx).ledger_count(run_id=waiting.run_id) == 0
    await runtime.cancel(waiting.run_id, by="test")


async def test_the_facade_names_a_refused_unattested_decision_with_its_typed_error(
    runtime: AgentRuntime, worker: Worker
) -> None:
    """A client that sends its own (bad) attestation gets UnattestedDecisionError."""
    waiting = await runtime.run("support", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    with pytest.raises(UnattestedDecisionError) as refused:
        await runtime.approve(
            waiting.run_id, approved=True, decided_by="bob", turn_digest=digest,
            attestation="not-a-seal",
        )  # fmt: skip
    assert "no valid attestation" in str(refused.value)
    assert (await runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    await runtime.cancel(waiting.run_id, by="test")


async def test_a_profile_that_opts_in_counts_the_stock_cli_decision_labelled_unauthenticated(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources, runs: RunStore
) -> None:
    waiting = await runtime.run("stock-cli", REFUND, initiator="alice")
    assert waiting.pending_approval is not None
    decision = ApprovalDecision(
        approved=True, decided_by="ops", turn_digest=waiting.pending_approval.turn_digest
    )
    await client.get_workflow_handle(waiting.run_id).signal(SIGNAL_APPROVE, decision)
    done = await until_status(runtime, waiting.run_id, RunStatus.COMPLETED)
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
    approval = next(e for e in runs.events(done.run_id, -1) if e.kind is EventKind.APPROVAL)
    assert approval.payload["decided_by"] == "unauthenticated:ops"
    assert approval.payload["authenticated"] is False


async def test_refused_decisions_do_not_extend_the_approval_timeout(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources
) -> None:
    """A stream of forged decisions neither approves nor keeps the run waiting past its
    `approval_timeout_seconds` (1 s here): each refusal resumes the wait on the same
    deadline."""
    waiting = await runtime.run("timed-approval", REFUND, initiator="alice")
    assert waiting.pending_approval is not None
    handle = client.get_workflow_handle(waiting.run_id)
    forged = ApprovalDecision(
        approved=True, decided_by="mallory", turn_digest=waiting.pending_approval.turn_digest
    )
    loop = asyncio.get_running_loop()
    began = loop.time()
    ended_after: float | None = None
    while loop.time() - began < 6:
        view = await runtime.status(waiting.run_id)
        if view.status.terminal:
            ended_after = loop.time() - began
            break
        await handle.signal(SIGNAL_APPROVE, forged)
        await asyncio.sleep(0.2)
    # Ended while the forged decisions kept coming, about 1 s after the suspension.
    assert ended_after is not None and ended_after < 4, ended_after
    done = await until_status(runtime, waiting.run_id, RunStatus.FAILED, RunStatus.CANCELLED)
    assert done.termination_reason is not None
    assert done.termination_reason.value == "approval_timeout"
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 0


async def test_a_refused_forged_update_does_not_take_the_real_deciders_update_id(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources
) -> None:
    """Temporal answers an update id it has seen with that update's outcome. The id once
    was `decide-<digest>-y-<decider>`: a forged update under bob's name and that id, once
    refused, made bob's own approval fail with its refusal."""
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    forged = ApprovalDecision(approved=True, decided_by="bob", turn_digest=digest)
    handle = client.get_workflow_handle(waiting.run_id)
    with pytest.raises(WorkflowUpdateFailedError):
        await handle.execute_update(UPDATE_DECIDE, forged, id=f"decide-{digest[:32]}-y-bob")
    await runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
    done = await until_status(runtime, waiting.run_id, RunStatus.COMPLETED)
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
