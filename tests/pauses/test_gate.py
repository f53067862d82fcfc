"""The pauses' pure state, without Temporal: which decisions the approval gate accepts, and
which follow-up the input pause takes and keeps on record."""

from datetime import UTC, datetime

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.reconcile_answer import ReconcileAnswer
from agentrt.workflows.pauses_gate import ApprovalGate, InputPause, ReconcileGate, Refusal


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


def test_four_eyes_binds_the_answers_that_run_a_write_again() -> None:
    gate = ReconcileGate(four_eyes=True, initiator="alice")
    gate.open("r1.1", "f1", approver="bob")

    def answer(by: str, what: str, then: str = "retry") -> ReconcileAnswer:
        result = "done" if what == "applied" else None
        return ReconcileAnswer.model_validate(
            {"call_id": "r1.1", "fence": "f1", "answer": what, "then": then,
             "answered_by": by, "result": result}
        )  # fmt: skip

    assert gate.check(answer("alice", "not_applied")) == ErrorType.SELF_RECONCILIATION
    assert gate.check(answer("alice", "not_applied", "error")) == ErrorType.SELF_RECONCILIATION
    assert gate.check(answer("bob", "not_applied")) == ErrorType.APPROVER_RECONCILIATION
    assert gate.check(answer("bob", "not_applied", "error")) is None  # runs nothing again
    assert gate.check(answer("carol", "not_applied")) is None
    for by in ("alice", "bob"):
        assert gate.check(answer(by, "applied")) is None
        assert gate.check(answer(by, "give_up")) is None
    gate.four_eyes = False
    assert gate.check(answer("alice", "not_applied")) is None
