"""Guardrail outcomes and a suspension that cannot be persisted."""

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from temporalio.worker import Worker

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.conftest import FailTimes

MakeRuntime = Callable[[Callable[[str], None]], AbstractAsyncContextManager[AgentRuntime]]


async def test_input_guardrail_deny_blocks_the_run(runtime: AgentRuntime, worker: Worker) -> None:
    view = await runtime.run("guarded", "tell me about the forbidden topic")
    assert view.status is RunStatus.FAILED
    assert view.outcome is Outcome.GUARDRAIL_BLOCKED
    assert view.termination_reason is TerminationReason.POLICY_DENIED
    kinds = [e.kind for e in await runtime.events(view.run_id)]
    assert EventKind.LLM not in kinds  # the model was never called


async def test_output_guardrail_requiring_approval_is_terminal(
    runtime: AgentRuntime, worker: Worker
) -> None:
    view = await runtime.run("guarded", "something risky")
    assert view.status is RunStatus.FAILED
    assert view.outcome is Outcome.GUARDRAIL_APPROVAL_REQUIRED
    assert view.termination_reason is TerminationReason.APPROVAL_DENIED


async def test_secrets_are_redacted_on_the_way_in_and_out(
    runtime: AgentRuntime, worker: Worker, runs: RunStore
) -> None:
    view = await runtime.run(
        "auto", "please leak it; my token is Bearer abcdefghijklmnop123 and mail me at a@b.io"
    )
    assert view.status is RunStatus.COMPLETED
    assert view.answer is not None
    assert "sk-proj-" not in view.answer and "bob@example.com" not in view.answer
    assert "[REDACTED]" in view.answer
    stored = " ".join(m.content for m in runs.transcript(view.run_id))
    assert "abcdefghijklmnop123" not in stored and "a@b.io" not in stored
    events = str([e.payload for e in await runtime.events(view.run_id)])
    assert "abcdefghijklmnop123" not in events and "sk-proj-ABCDEF" not in events


async def test_a_suspension_that_cannot_be_persisted_ends_suspend_failed(
    make_runtime: MakeRuntime, parts: WorkerResources
) -> None:
    hook = FailTimes("suspend.before_commit", times=100)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("support", "Please refund order 1042")
    assert hook.reached == 3
    assert view.status is RunStatus.FAILED
    assert view.outcome is Outcome.SUSPEND_FAILED
    assert view.termination_reason is TerminationReason.SUSPEND_FAILED
    assert view.pending_approval is None
    assert DemoWorld(parts.ctx).ledger_count(run_id=view.run_id) == 0
