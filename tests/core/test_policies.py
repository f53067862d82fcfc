"""Approval policies, the evaluation (core/policies.py, Cedar through cedarpy): how a
turn's calls combine, that `forbid` overrides, and that whatever Cedar cannot judge is a
PolicyError (the activity then asks a person), never an allow."""

import pytest

from agentrt.activities.policy import _verdict
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.messages import ToolCall, ToolSpec, Usage
from agentrt.contracts.policy import PolicyRequest
from agentrt.core.policies import Asked, PolicyError, check_against_tools, checked, judge
from tests.workflows._policy import BROKEN, REFUNDS, UNKNOWN_ARGUMENT

ASKED = Asked(profile="refunds", initiator="alice", spend=Usage.none())
POLICY = checked("refunds", 3, REFUNDS)


def _refund(cents: object, order: str = "1042") -> ToolCall:
    return ToolCall(
        call_id=f"c{cents}", name="issue_refund",
        arguments={"order_id": order, "amount_cents": cents},
    )  # fmt: skip


def test_a_turn_is_denied_by_any_call_allowed_by_all_and_else_asks_the_most_people() -> None:
    assert judge(POLICY, [_refund(300), _refund(400)], ASKED).outcome == "allow"
    mixed = judge(POLICY, [_refund(300), _refund(90000)], ASKED)
    assert (mixed.outcome, mixed.approvers) == ("ask", 2)
    assert judge(POLICY, [_refund(300), _refund(300, "666")], ASKED).outcome == "deny"
    middle = judge(POLICY, [_refund(20000)], ASKED)
    assert (middle.outcome, middle.approvers) == ("ask", 1)


def test_a_forbid_overrides_a_permit_of_the_same_action() -> None:
    text = REFUNDS + 'forbid(principal == Initiator::"mallory", action, resource);'
    policy = checked("refunds", 5, text)
    mallory = Asked(profile="refunds", initiator="mallory", spend=Usage.none())
    assert judge(policy, [_refund(300)], mallory).outcome == "ask"
    assert judge(policy, [_refund(300)], ASKED).outcome == "allow"


def test_the_spend_so_far_is_in_the_context() -> None:
    text = """permit(principal, action == Action::"approve", resource)
      when { context.spend.cost_micros < 10000 && context.spend.prompt_tokens < 500 };"""
    policy = checked("cheap", 1, text)
    cheap = Asked("p", "alice", Usage(prompt_tokens=10, cost_usd=0.001))
    dear = Asked("p", "alice", Usage(prompt_tokens=10, cost_usd=0.5))
    assert judge(policy, [_refund(300)], cheap).outcome == "allow"
    assert judge(policy, [_refund(300)], dear).outcome == "ask"
    with pytest.raises(PolicyError):  # an unknown cost is absent: the policy errs
        judge(policy, [_refund(300)], Asked("p", "alice", Usage(cost_usd=None)))


def test_what_cedar_cannot_judge_is_an_error_never_an_allow() -> None:
    unpriced = Asked(profile="refunds", initiator="alice", spend=Usage(cost_usd=None))
    with pytest.raises(PolicyError, match="cost_micros"):  # the run's cost is unknown
        judge(checked("broken", 1, BROKEN), [_refund(300)], unpriced)
    with pytest.raises(PolicyError, match="not an integer"):
        judge(POLICY, [_refund(12.5)], ASKED)  # Cedar has no floats
    assert judge(POLICY, [_refund(300.0)], ASKED).outcome == "allow"  # an integral float


def test_a_policy_the_worker_does_not_hold_asks_one_person() -> None:
    req = PolicyRequest(
        run_id="r", privacy="full", sequence=1, round=1, policy="refunds@9", profile="p",
        initiator="alice", turn_digest="d", calls=[_refund(300)], spend=Usage.none(),
    )  # fmt: skip
    verdict, decided = _verdict(None, req)
    assert (verdict.outcome, verdict.approvers, decided) == ("ask", 1, False)
    assert "not loaded" in verdict.reason


def test_a_policy_that_does_not_parse_or_is_badly_named_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="approval policy x@1: "):
        checked("x", 1, "permit(")
    with pytest.raises(ConfigError, match="expected name@version"):
        checked("a@b", 1, "")


REFUND_SPEC = ToolSpec(
    name="issue_refund",
    description="refund",
    parameters={
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount_cents": {"type": "integer"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["order_id", "amount_cents"],
    },
)


def test_a_policy_reading_an_argument_no_tool_has_is_refused_at_start() -> None:
    with pytest.raises(ConfigError) as refused:
        check_against_tools(checked("tiers", 1, UNKNOWN_ARGUMENT), "refunds", [REFUND_SPEC])
    message = str(refused.value)
    assert message.startswith("approval policy tiers@1 (profile refunds, tool issue_refund):")
    assert "customer_tier" in message and "order_id, amount_cents, note" in message
    mismatched = """permit(principal, action == Action::"approve", resource)
      when { context.args.order_id < 5 };"""
    with pytest.raises(ConfigError, match="type error"):
        check_against_tools(checked("types", 1, mismatched), "refunds", [REFUND_SPEC])


def test_a_sound_policy_and_what_only_a_call_can_show_pass_the_start_check() -> None:
    optional = """permit(principal, action == Action::"approve", resource)
      when { context.args.note == "ok" && context.spend.cost_micros < 10 };"""
    for policy in (POLICY, checked("broken", 1, BROKEN), checked("note", 1, optional)):
        check_against_tools(policy, "refunds", [REFUND_SPEC])  # no error: it starts
    free_form = ToolSpec(name="issue_refund", description="d", parameters={"type": "object"})
    # Undeclared arguments: the check cannot know them, so the call decides (a person).
    check_against_tools(checked("tiers", 1, UNKNOWN_ARGUMENT), "refunds", [free_form])
    with pytest.raises(PolicyError, match="customer_tier"):
        judge(checked("tiers", 1, UNKNOWN_ARGUMENT), [_refund(300)], ASKED)
