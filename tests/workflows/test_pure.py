"""Pure pieces of the workflow, without Temporal."""

from agentrt.activities.guardrails import Verdict
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.plan import RunPlan, ToolPlan
from agentrt.contracts.profiles import Timeouts
from agentrt.contracts.run import STOPPING_VERDICTS
from agentrt.workflows._loop import (
    LoopState,
    Route,
    Stop,
    guardrail_stop,
    needs_approval,
    route,
    turn_digest,
)

PLAN = RunPlan(
    profile="p",
    model="scripted:x",
    max_iterations=5,
    privacy="full",
    timeouts=Timeouts(),
    tools=[
        ToolPlan(name="read", effect=ToolEffect.READ_ONLY),
        ToolPlan(name="put", effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True),
        ToolPlan(name="pay", effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True),
    ],
)


def test_routes_by_declared_effect_and_refuses_what_is_not_offered() -> None:
    assert route(ToolCall(call_id="1", name="read"), PLAN) == (Route.EXECUTE, ToolEffect.READ_ONLY)
    assert route(ToolCall(call_id="1", name="put"), PLAN)[0] is Route.EXECUTE
    assert route(ToolCall(call_id="1", name="pay"), PLAN)[0] is Route.FENCED_WRITE
    kind, effect = route(ToolCall(call_id="1", name="nope"), PLAN)
    assert kind is Route.REFUSE and effect is ToolEffect.NON_IDEMPOTENT_WRITE


def test_unknown_effects_fail_closed() -> None:
    assert ToolEffect.resolve(None) is ToolEffect.NON_IDEMPOTENT_WRITE
    assert ToolEffect.resolve("WRITE_SOMETIMES") is ToolEffect.NON_IDEMPOTENT_WRITE
    assert ToolEffect.resolve("READ_ONLY") is ToolEffect.READ_ONLY


def test_a_turn_needs_approval_when_any_offered_call_is_bound() -> None:
    read = ToolCall(call_id="1", name="read")
    assert not needs_approval([read], PLAN)
    assert needs_approval([read, ToolCall(call_id="2", name="pay")], PLAN)
    assert not needs_approval([ToolCall(call_id="3", name="not-offered")], PLAN)


def test_digest_covers_the_pending_calls_only() -> None:
    a = [ToolCall(call_id="r1.1", name="pay", arguments={"amount": 1})]
    b = [ToolCall(call_id="r1.1", name="pay", arguments={"amount": 2})]
    assert turn_digest(a) == turn_digest(list(a)) and len(turn_digest(a)) == 64
    assert turn_digest(a) != turn_digest(b)


def test_sequences_are_allocated_in_order() -> None:
    st = LoopState(next_sequence=1)
    assert [st.take_sequence() for _ in range(3)] == [1, 2, 3]


def test_stops_map_to_outcomes() -> None:
    assert Stop(TerminationReason.POLICY_DENIED).outcome is Outcome.GUARDRAIL_BLOCKED
    assert Stop(TerminationReason.APPROVAL_DENIED).outcome is Outcome.GUARDRAIL_APPROVAL_REQUIRED
    assert Stop(TerminationReason.SUSPEND_FAILED).outcome is Outcome.SUSPEND_FAILED
    assert Stop(TerminationReason.INTERRUPTED_WRITE).outcome is Outcome.FAILED
    assert Stop(TerminationReason.CANCELLED, RunStatus.CANCELLED).outcome is Outcome.CANCELLED
    assert guardrail_stop("ALLOW") is None and guardrail_stop("REDACT") is None
    deny = guardrail_stop("DENY")
    assert deny is not None and deny.reason is TerminationReason.POLICY_DENIED


def test_the_model_activity_stops_on_the_verdicts_the_workflow_stops_on() -> None:
    """The answer completes the run only where the workflow would not stop it: both must
    read the output guardrail's verdicts alike (contracts.run.STOPPING_VERDICTS)."""
    for verdict in Verdict:
        assert (guardrail_stop(verdict.name) is not None) == (verdict.name in STOPPING_VERDICTS)
