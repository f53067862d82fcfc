"""A completion transaction that keeps failing: the run ends FAILED (completion_failed),
never COMPLETED without its answer, and still shows the answer's turn."""

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from tests.conftest import FailTimes
from tests.workflows.test_failures import MakeRuntime


async def test_failed_completion_transaction_leaves_the_run_failed_without_answer(
    make_runtime: MakeRuntime,
) -> None:
    hook = FailTimes("complete.before_commit", times=100)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "what about my order?")
        events = await runtime.events(view.run_id)
    assert hook.reached == 3  # bounded retries, then the run is failed
    assert view.status is RunStatus.FAILED
    assert view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.COMPLETION_FAILED
    assert view.answer is None
    kinds = [e.kind for e in events]
    assert EventKind.RUN_COMPLETED not in kinds and kinds[-1] is EventKind.RUN_FAILED


async def test_a_failed_completion_keeps_the_answers_turn(make_runtime: MakeRuntime) -> None:
    """The answer's turn is recorded in the completion's transaction; when that fails, the
    turn is recorded on its own before the next attempt: the failed run still shows it."""
    hook = FailTimes("complete.before_commit", times=100)
    async with make_runtime(hook) as runtime:
        view = await runtime.run("auto", "what about my order?")
        events = await runtime.events(view.run_id)
    assert view.status is RunStatus.FAILED and view.answer is None
    kinds = [e.kind for e in events]
    assert kinds == [
        EventKind.RUN_STARTED,
        EventKind.LLM,
        EventKind.TOOL,
        EventKind.LLM,
        EventKind.RUN_FAILED,
    ]
