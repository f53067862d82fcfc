"""What Temporal Web is told about a run: metadata only, at the run's privacy level, and a
decider labelled unauthenticated unless the operator API attested it."""

from datetime import UTC, datetime

from agentrt.contracts.approval import ApprovalDecision, PendingApproval
from agentrt.contracts.messages import ToolCall
from agentrt.workflows._details import decision_summary, tools_shown
from tests.workflows.test_pure import PLAN

PENDING = PendingApproval(
    turn_digest="d" * 64,
    round=2,
    calls=[
        ToolCall(call_id="1", name="pay", arguments={"iban": "DE00 1234"}),
        ToolCall(call_id="2", name="put", arguments={"k": "secret"}),
    ],
    requested_at=datetime(2026, 1, 1, 10, 42, tzinfo=UTC),
)


def test_tool_names_down_to_metadata_only_a_count_at_none() -> None:
    for level in ("full", "redacted", "metadata"):
        plan = PLAN.model_copy(update={"privacy": level})
        assert tools_shown(plan, PENDING) == "pay, put"
    assert tools_shown(PLAN.model_copy(update={"privacy": "none"}), PENDING) == "2 tool calls"


def test_the_decision_summary_labels_an_unattested_decider() -> None:
    base = {"turn_digest": "d" * 64, "decided_by": "bob"}
    attested = ApprovalDecision(approved=True, attestation="sealed", **base)  # type: ignore[arg-type]
    assert decision_summary(attested) == "record decision: approve by bob"
    stock = ApprovalDecision(approved=False, **base)  # type: ignore[arg-type]
    assert decision_summary(stock) == "record decision: deny by unauthenticated:bob"
