"""Pure pieces of the workflow, without Temporal."""

from datetime import UTC, datetime

from agentrt.activities.guardrails import Verdict
from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.profiles import RunPlan, Timeouts, ToolPlan
from agentrt.contracts.run import STOPPING_VERDICTS
from agentrt.workflows._approval import ApprovalGate, Refusal
from agentrt.workflows._input import InputPause
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


def _pending(digest: str = "a" * 64) -> PendingApproval:
    return PendingApproval(turn_digest=digest, round=1, calls=[], requested_at=datetime.now(UTC))


def _d(by: str = "bob", digest: str = "a" * 64, approved: bool = True) -> ApprovalDecision:
    return ApprovalDecision(approved=approved, decided_by=by, turn_digest=digest)


def test_gate_refuses_what_is_not_the_pending_undecided_turn() -> None:
    gate = ApprovalGate(initiator="alice", four_eyes=True)
    assert gate.check(_d()) == Refusal.NOT_AWAITING
    gate.open(_pending())
    assert gate.check(_d(digest="b" * 64)) == Refusal.STALE_TURN
    assert gate.check(_d(by="alice")) == Refusal.SELF_APPROVAL
    assert gate.check(_d(by="alice", approved=False)) is None  # the initiator may deny
    assert gate.accept(_d())
    assert gate.check(_d(by="carol")) == Refusal.ALREADY_DECIDED
    gate.close_turn()
    assert gate.check(_d(by="carol")) == Refusal.ALREADY_DECIDED
    gate.open(_pending("c" * 64))
    gate.closed = True
    assert gate.check(_d(digest="c" * 64)) == Refusal.NOT_AWAITING


def test_the_model_activity_stops_on_the_verdicts_the_workflow_stops_on() -> None:
    """The answer completes the run only where the workflow would not stop it: both must
    read the output guardrail's verdicts alike (contracts.run.STOPPING_VERDICTS)."""
    for verdict in Verdict:
        assert (guardrail_stop(verdict.name) is not None) == (verdict.name in STOPPING_VERDICTS)


def test_the_input_pause_takes_one_message_per_pause_and_records_it_on_close() -> None:
    pause = InputPause()
    assert not pause.accepts()  # not waiting: a message is refused
    pause.open()
    first = InputMessage(message_id="m1", text="my order is 1042")
    assert pause.accepts()
    assert pause.take(first)
    # The first one taken is the one recorded: a second in the same pause is refused.
    assert not pause.accepts()
    assert not pause.take(InputMessage(message_id="m1b", text="second")) and pause.message == first
    pause.close(recorded=first)
    assert not pause.waiting and pause.message is None and pause.recorded == {"m1"}
    pause.open()
    assert pause.take(InputMessage(message_id="m2", text="again"))
    pause.close()  # the store refused it: not on record
    assert pause.recorded == {"m1"} and not pause.accepts()
    # A message arriving after the pause closed is not taken (the handler refuses it).
    assert not pause.take(InputMessage(message_id="m3", text="late")) and pause.message is None
