"""The approval gate where a policy asks for N people (pure): one person's approval counts
once, a decider named as a policy is refused, four-eyes still binds."""

from datetime import UTC, datetime

from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.errors import ErrorType
from agentrt.workflows.pauses_gate import ApprovalGate

DIGEST = "d" * 64


def _gate() -> ApprovalGate:
    gate = ApprovalGate(initiator="alice", four_eyes=True, needed=2)
    gate.open(PendingApproval(turn_digest=DIGEST, round=1, requested_at=datetime.now(UTC)))
    return gate


def _by(name: str) -> ApprovalDecision:
    return ApprovalDecision(approved=True, decided_by=name, turn_digest=DIGEST)


def test_one_person_counts_once_towards_the_people_a_policy_asks_for() -> None:
    gate = _gate()
    first = _by("bob")
    assert gate.take(first)
    gate.approved_partly(first)
    assert gate.on_record(first) and gate.taken is None
    assert gate.check(_by("bob")) == ErrorType.SAME_APPROVER.value
    assert gate.check(_by("alice")) == ErrorType.SELF_APPROVAL.value
    assert gate.check(_by("carol")) is None
    gate.close_turn()
    assert gate.approved_by == set() and gate.needed == 1


def test_a_person_may_not_decide_as_a_policy() -> None:
    refused = _gate().refused(_by("policy refunds@3"))
    assert refused is not None and refused.type == ErrorType.POLICY_DECIDER.value
    assert _gate().refused(_by("  Policy refunds@3")) is not None
