"""Issue 42 item 3: one pause. Every answer a waiting run takes comes by one path: the
`answer` update (workflows/answers.py) behind `RuntimeClient.answer`; the updates of earlier
clients (`decide`, `submit_input`, `reconcile`) stay registered, as adapters onto it. A run
of an earlier build, which has no `answer` update, still gets the answer: the client sends
it again as the kind's own update. The route shape: tests/api/test_answers.py; the
attestation on the new update: tests/security/test_answer_update.py."""

import uuid
from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.answers import Answered
from agentrt.contracts.approval import ApprovalDecision, DecideResult
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import InvalidRequestError, StaleTurnError
from agentrt.contracts.ids import UPDATE_ANSWER, UPDATE_BEGUN, UPDATE_DECIDE
from agentrt.starter import _answering
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.remote import answer_body
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from agentrt.workflows._loop import turn_digest
from tests.workflows._waiting import pending_digest, watch

REFUND = "Please refund order 1042"


async def test_the_answer_method_sends_by_the_answer_update_and_the_run_goes_on(
    runtime: AgentRuntime,
    worker: Worker,
    parts: WorkerResources,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waiting = await runtime.run("support", REFUND, initiator="alice")
    digest = pending_digest(waiting)
    sent = watch(monkeypatch, _answering, "send_update")
    with pytest.raises(StaleTurnError):  # the gate's refusals, typed, as before
        await runtime.answer(
            waiting.run_id, ApprovalDecision(approved=True, decided_by="bob", turn_digest="f" * 64)
        )
    after = await runtime.answer(
        waiting.run_id, ApprovalDecision(approved=True, decided_by="bob", turn_digest=digest)
    )
    assert after.status is not RunStatus.WAITING_FOR_APPROVAL
    assert len(sent.raised) == 1 and len(sent.returned) == 1  # both by the one sender
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    assert DemoWorld(parts.ctx).ledger_count(run_id=done.run_id) == 1
    [approval] = [e for e in await runtime.events(done.run_id) if e.kind is EventKind.APPROVAL]
    # Attested by the client (it holds the seal key), as `approve` did.
    assert approval.payload["decided_by"] == "bob" and approval.payload["authenticated"] is True
    history = await runtime.client.get_workflow_handle(done.run_id).fetch_history()
    updates = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        for e in history.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    assert updates == [UPDATE_BEGUN, UPDATE_ANSWER]  # the refused one left no trace


async def test_the_answer_update_and_the_decide_adapter_answer_alike(
    runtime: AgentRuntime, worker: Worker, client: Client
) -> None:
    """A payload the path refuses is refused the same by both, typed; the adapter answers
    with its own result type, the update with `Answered`."""
    first = await runtime.run("stock-cli", REFUND)
    second = await runtime.run("stock-cli", REFUND)
    for run, name, result in (
        (first, UPDATE_ANSWER, Answered),
        (second, UPDATE_DECIDE, DecideResult),
    ):
        handle = client.get_workflow_handle(run.run_id)
        stale = ApprovalDecision(approved=True, decided_by="ops", turn_digest="0" * 64)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(name, stale, rpc_timeout=timedelta(seconds=20))
        cause = refused.value.cause
        assert isinstance(cause, ApplicationError) and cause.type == "StaleTurn"
        assert cause.message == "decision refused: StaleTurn"
        with pytest.raises(WorkflowUpdateFailedError) as null:
            await handle.execute_update(name, None, rpc_timeout=timedelta(seconds=20))
        assert isinstance(null.value.cause, ApplicationError)
        assert null.value.cause.type == "InvalidRequest"
        # The profile counts unattested decisions: the stock path's bare decision is taken.
        ok = ApprovalDecision(approved=True, decided_by="ops", turn_digest=pending_digest(run))
        answered = await handle.execute_update(name, ok, result_type=result)
        assert isinstance(answered, result) and answered.run_id == run.run_id
        assert (await runtime.result(run.run_id)).status is RunStatus.COMPLETED


async def test_an_input_message_through_the_http_client_is_refused_before_sending() -> None:
    with pytest.raises(InvalidRequestError, match="A2A API"):
        answer_body(InputMessage(message_id="m1", text="hi"))


# --- a run of an earlier build: no `answer` update --------------------------------------


@workflow.defn(name="EarlierBuildRun")
class EarlierBuildRun:
    """A workflow that, like every build before the `answer` update, has only `decide`."""

    def __init__(self) -> None:
        self.decision: ApprovalDecision | None = None

    @workflow.run
    async def run(self) -> str:
        await workflow.wait_condition(lambda: self.decision is not None)
        assert self.decision is not None
        return self.decision.decided_by

    @workflow.update(name=UPDATE_DECIDE)
    async def decide(self, decision: ApprovalDecision) -> DecideResult:
        self.decision = decision
        return DecideResult(run_id="", approved=decision.approved, turn_digest="d")


async def test_a_run_of_an_earlier_build_gets_the_answer_by_its_own_update(
    client: Client,
) -> None:
    queue = f"earlier-{uuid.uuid4().hex[:8]}"
    decision = ApprovalDecision(
        approved=True, decided_by="bob", turn_digest=turn_digest([]), attestation="a"
    )
    sdk = client
    # Unsandboxed: this module imports the client side, which the sandbox would refuse.
    async with Worker(
        sdk,
        task_queue=queue,
        workflows=[EarlierBuildRun],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        handle = await sdk.start_workflow(
            EarlierBuildRun.run, id=f"earlier-{uuid.uuid4()}", task_queue=queue
        )
        # Straight: the run rejects the `answer` update it has no handler for.
        with pytest.raises(WorkflowUpdateFailedError) as rejected:
            await handle.execute_update(UPDATE_ANSWER, decision, id="probe")
        assert _answering.no_answer_update(rejected.value)
        # The client's one sender falls back to the kind's own update.
        await _answering.send_update(sdk, handle.id, decision, "decide-once")
        assert await handle.result() == "bob"
