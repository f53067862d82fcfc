"""Approval: suspension before any call of the turn, typed decisions, audit, denial."""

import asyncio
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import (
    AlreadyDecidedError,
    RunNotAwaitingApprovalError,
    SelfApprovalError,
    StaleTurnError,
)
from agentrt.contracts.ids import QUERY_PENDING_APPROVAL, SIGNAL_APPROVE
from agentrt.contracts.views import RunView
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter import _deciding
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from agentrt.workflows._loop import turn_digest
from tests.workflows._waiting import decide, pending_digest, until_admitted, until_status, watch

REFUND = "Please refund order 1042"


async def _completed(
    runtime: AgentRuntime, parts: WorkerResources, run_id: str, *, refunds: int
) -> RunView:
    """The run's result: COMPLETED, with `refunds` refunds in the demo ledger."""
    done = await runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == refunds
    return done


async def test_a_write_suspends_the_turn_and_an_approval_runs_it_once(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources, client: Client
) -> None:
    waiting = await runtime.run("support", REFUND, initiator="alice")
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    assert waiting.outcome is Outcome.AWAITING_APPROVAL
    pending = waiting.pending_approval
    assert pending is not None and [c.name for c in pending.calls] == ["issue_refund"]
    assert pending.turn_digest == turn_digest(pending.calls)
    queried = await client.get_workflow_handle(waiting.run_id).query(
        QUERY_PENDING_APPROVAL, result_type=PendingApproval
    )
    assert queried.turn_digest == pending.turn_digest
    assert DemoWorld(parts.ctx).ledger_count(run_id=waiting.run_id) == 0
    assert [r.run_id for r in await runtime.inbox(limit=500)].count(waiting.run_id) == 1

    await runtime.approve(
        waiting.run_id, approved=True, decided_by="bob", turn_digest=pending.turn_digest
    )
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED and done.answer
    assert done.pending_approval is None
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
    events = await runtime.events(done.run_id)
    kinds = [e.kind for e in events]
    approval = kinds.index(EventKind.APPROVAL)
    assert kinds[approval - 1] is EventKind.APPROVAL_REQUESTED
    assert events[approval].payload == {
        "approved": True,
        # AgentRuntime holds the seal key: it attests its decider (issue 25).
        "decided_by": "bob",
        "authenticated": True,
        "turn_digest": pending.turn_digest,
    }
    write = next(
        i
        for i, e in enumerate(events)
        if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"
    )
    assert write > approval  # the decision is on record before the write runs


async def test_every_recording_step_carries_the_runs_privacy_level(
    runtime: AgentRuntime, worker: Worker, runs: RunStore, client: Client
) -> None:
    """The workflow hands its plan's level to each activity that records at it, so none
    of them reads the run's snapshot to learn it."""
    waiting = await runtime.run("support", REFUND)
    assert waiting.pending_approval is not None
    await runtime.approve(
        waiting.run_id, approved=True, decided_by="bob",
        turn_digest=waiting.pending_approval.turn_digest,
    )  # fmt: skip
    assert (await runtime.result(waiting.run_id)).status is RunStatus.COMPLETED
    level = runs.snapshot(waiting.run_id).privacy
    history = await client.get_workflow_handle(waiting.run_id).fetch_history()
    carried: dict[str, set[object]] = {}
    for e in history.events:
        if e.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        attrs = e.activity_task_scheduled_event_attributes
        request = data_converter().payload_converter.from_payload(attrs.input.payloads[0])
        if isinstance(request, dict) and "privacy" in request:
            carried.setdefault(attrs.activity_type.name, set()).add(request["privacy"])
    assert {"run.suspend", "run.resume", "write.execute"} <= carried.keys()
    assert all(levels == {level} for levels in carried.values()), carried


async def test_a_denial_refuses_every_pending_call_and_the_loop_goes_on(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    waiting = await runtime.run("support", REFUND)
    assert waiting.pending_approval is not None
    await runtime.approve(
        waiting.run_id,
        approved=False,
        decided_by="bob",
        turn_digest=waiting.pending_approval.turn_digest,
        reason="no",
    )
    done = await _completed(runtime, parts, waiting.run_id, refunds=0)
    events = await runtime.events(done.run_id)
    refused = [e for e in events if e.kind is EventKind.TOOL and e.payload.get("refused")]
    assert len(refused) == 1 and refused[0].payload["result"] == "Denied by bob: no"
    assert events[-1].kind is EventKind.RUN_COMPLETED


async def test_decisions_are_checked_against_the_pending_turn(
    runtime: AgentRuntime, worker: Worker
) -> None:
    waiting = await runtime.run("support", REFUND)
    digest = pending_digest(waiting)
    with pytest.raises(StaleTurnError):
        await runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest="0" * 64)
    assert (await runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL

    # Two approvers at once: exactly one wins, the other gets a typed error.
    results = await asyncio.gather(
        runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest),
        runtime.approve(
            waiting.run_id, approved=False, decided_by="carol", turn_digest=digest, reason="no"
        ),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1
    assert isinstance(errors[0], AlreadyDecidedError | RunNotAwaitingApprovalError)
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    decisions = [e for e in await runtime.events(done.run_id) if e.kind is EventKind.APPROVAL]
    assert len(decisions) == 1
    with pytest.raises(RunNotAwaitingApprovalError):
        await runtime.approve(done.run_id, approved=True, decided_by="dave", turn_digest=digest)


async def test_a_rejected_update_leaves_no_trace_in_history(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    waiting = await runtime.run("support", REFUND)
    handle = client.get_workflow_handle(waiting.run_id)
    # The row says WAITING once the suspension commits; the workflow task that opens the
    # gate (and upserts the search attribute) lands just after: wait for it.
    for _ in range(200):
        events = (await handle.fetch_history()).events
        if events[-1].event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            break
        await asyncio.sleep(0.05)
    before = len(events)
    with pytest.raises(StaleTurnError):
        await runtime.approve(waiting.run_id, approved=True, decided_by="x", turn_digest="f" * 64)
    assert len((await handle.fetch_history()).events) == before
    await runtime.cancel(waiting.run_id, by="test")
    assert (await runtime.result(waiting.run_id)).status is RunStatus.CANCELLED


async def test_the_stock_signal_path_approves_too(
    runtime: AgentRuntime, worker: Worker, client: Client, parts: WorkerResources
) -> None:
    # A profile that opts in (`unattested_decisions: allow`) counts unattested decisions.
    waiting = await runtime.run("stock-cli", REFUND)
    assert waiting.pending_approval is not None
    handle = client.get_workflow_handle(waiting.run_id)
    # A stale signal is ignored; the right one is accepted.
    await handle.signal(
        SIGNAL_APPROVE, ApprovalDecision(approved=True, decided_by="ops", turn_digest="0" * 64)
    )
    await handle.signal(
        SIGNAL_APPROVE,
        ApprovalDecision(
            approved=True, decided_by="ops", turn_digest=waiting.pending_approval.turn_digest
        ),
    )
    await _completed(runtime, parts, waiting.run_id, refunds=1)


async def test_a_run_suspends_again_after_an_approval(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    first = await runtime.run("support", "refund twice please")
    assert first.pending_approval is not None
    await decide(runtime, first, approved=True)
    second = await until_status(
        runtime, first.run_id, RunStatus.WAITING_FOR_APPROVAL, RunStatus.COMPLETED
    )
    while second.status is RunStatus.WAITING_FOR_APPROVAL and (
        second.pending_approval is None
        or second.pending_approval.turn_digest == first.pending_approval.turn_digest
    ):
        second = await runtime.status(first.run_id)
        await asyncio.sleep(0.05)
    assert second.status is RunStatus.WAITING_FOR_APPROVAL
    assert second.pending_approval is not None
    assert second.pending_approval.round == 2
    await decide(runtime, second, approved=True)
    await _completed(runtime, parts, first.run_id, refunds=2)


async def test_approval_timeout_ends_the_run_with_its_own_reason(
    runtime: AgentRuntime, worker: Worker, parts: WorkerResources
) -> None:
    waiting = await runtime.run("timed-approval", REFUND)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.FAILED
    assert done.termination_reason is TerminationReason.APPROVAL_TIMEOUT
    assert done.pending_approval is None
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 0


async def test_four_eyes_refuses_the_initiators_approval_but_not_a_denial(
    runtime: AgentRuntime, worker: Worker
) -> None:
    waiting = await runtime.run("four-eyes", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    with pytest.raises(SelfApprovalError):
        await runtime.approve(waiting.run_id, approved=True, decided_by="alice", turn_digest=digest)
    await runtime.approve(
        waiting.run_id, approved=False, decided_by="alice", turn_digest=digest, reason="mine"
    )
    assert (await runtime.result(waiting.run_id)).status is RunStatus.COMPLETED


async def test_two_decisions_queued_while_no_worker_polls_have_one_winner(
    client: Client, parts: WorkerResources, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    worker_settings = settings.replace(temporal={"task_queue": queue})
    runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
    async with make_worker(client, parts, worker_settings):
        waiting = await runtime.run("support", REFUND)
    digest = pending_digest(waiting)
    sent = watch(monkeypatch, _deciding, "decision_update_id")  # each send's update id
    # No worker is polling: both updates wait at the server and reach the next worker
    # close together (possibly in one activation, where both validators pass before
    # either handler runs: the handler refuses the second).
    decisions = [
        asyncio.create_task(
            runtime.approve(waiting.run_id, approved=True, decided_by=who, turn_digest=digest)
        )
        for who in ("bob", "carol")
    ]
    await sent.until(lambda c: len(c.returned) >= 2, "both decisions sent")
    for update_id in sent.returned:
        await until_admitted(client, waiting.run_id, update_id)
    async with make_worker(client, parts, worker_settings):
        results = await asyncio.gather(*decisions, return_exceptions=True)
        done = await runtime.result(waiting.run_id)
    assert sum(isinstance(r, AlreadyDecidedError) for r in results) == 1
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
    approvals = [e for e in await runtime.events(done.run_id) if e.kind is EventKind.APPROVAL]
    assert len(approvals) == 1
