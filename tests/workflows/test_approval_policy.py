"""Approval policies (issue 44, item 3) at the real boundary: a real dev server, the
scripted model, the demo refund tool, a Cedar policies file. A small refund approves
itself (no person, the decision names the policy), a large one needs two distinct people,
a blocked one is denied, a policy that errs asks a person, a malformed one stops the worker."""

from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import AgentRuntimeError, ConfigError
from agentrt.contracts.ids import ACT_POLICY_DECIDE, ACT_RUN_APPROVE_PARTLY
from agentrt.store.demo import DemoWorld
from tests.workflows._policy import (
    UNKNOWN_ARGUMENT,
    composed,
    policies_file,
    refunder,
    serving,
)
from tests.workflows._replay import assert_replays, fetch, scheduled
from tests.workflows._waiting import pending_digest, until_status


def _events(runs, run_id: str, kind: EventKind) -> list[dict]:  # type: ignore[no-untyped-def]
    return [dict(e.payload) for e in runs.events(run_id, -1) if e.kind is kind]


async def test_a_small_refund_is_approved_by_the_policy_with_no_person(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    async with serving(client, settings, tmp_path, [refunder("pol-small")]) as s:
        done = await s.refund("pol-small", "small", RunStatus.COMPLETED)
        assert _events(s.runs, done.run_id, EventKind.APPROVAL_REQUESTED) == []
        [approval] = _events(s.runs, done.run_id, EventKind.APPROVAL)
        assert approval["decided_by"] == "policy refunds@3"
        assert approval["approved"] is True and approval["authenticated"] is True
        assert approval["policy"] == "refunds@3" and approval["attestation"]
        assert DemoWorld(s.resources.ctx).ledger_count(run_id=done.run_id) == 1


async def test_a_large_refund_needs_two_distinct_people(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    profile = refunder("pol-large", four_eyes=True)
    async with serving(client, settings, tmp_path, [profile]) as s:
        waiting = await s.refund("pol-large", "large", RunStatus.WAITING_FOR_APPROVAL)
        [asked] = _events(s.runs, waiting.run_id, EventKind.POLICY_DECISION)
        assert asked["decided_by"] == "policy refunds@3" and asked["approvers"] == 2
        digest = pending_digest(waiting)
        world = DemoWorld(s.resources.ctx)

        await s.runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
        # One approval is not enough: the run still waits, the refund has not run.
        view = await s.runtime.status(waiting.run_id)
        assert view.status is RunStatus.WAITING_FOR_APPROVAL
        assert world.ledger_count(run_id=waiting.run_id) == 0
        # The same person again is the same decision (its update id dedupes it): it counts
        # once, and the run still waits (the gate's SameApprover: tests/pauses/test_gate_policy.py).
        await s.runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
        view = await s.runtime.status(waiting.run_id)
        assert view.status is RunStatus.WAITING_FOR_APPROVAL
        with pytest.raises(AgentRuntimeError):  # four-eyes: the initiator never counts
            await s.runtime.approve(
                waiting.run_id, approved=True, decided_by="alice", turn_digest=digest
            )
        assert world.ledger_count(run_id=waiting.run_id) == 0

        await s.runtime.approve(
            waiting.run_id, approved=True, decided_by="carol", turn_digest=digest
        )
        done = await until_status(s.runtime, waiting.run_id, RunStatus.COMPLETED)
        approvals = _events(s.runs, done.run_id, EventKind.APPROVAL)
        assert [(a["decided_by"], a.get("partial", False)) for a in approvals] == [
            ("bob", True),
            ("carol", False),
        ]
        assert world.ledger_count(run_id=done.run_id) == 1
        # The verdict is in history: a replay on today's code decides the same.
        history = await fetch(client, done.run_id)
        await assert_replays(history, what="a two-person policy run")
        assert {ACT_POLICY_DECIDE, ACT_RUN_APPROVE_PARTLY} <= set(scheduled(history))


async def test_a_refund_on_a_blocked_order_is_denied_by_the_policy(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    async with serving(client, settings, tmp_path, [refunder("pol-deny")]) as s:
        done = await s.refund("pol-deny", "blocked", RunStatus.COMPLETED)
        [approval] = _events(s.runs, done.run_id, EventKind.APPROVAL)
        assert approval["decided_by"] == "policy refunds@3" and approval["approved"] is False
        assert DemoWorld(s.resources.ctx).ledger_count(run_id=done.run_id) == 0
        [tool] = _events(s.runs, done.run_id, EventKind.TOOL)
        assert "Denied by policy refunds@3" in str(tool)
        await assert_replays(await fetch(client, done.run_id), what="a policy's denial")


async def test_a_policy_that_errs_asks_a_person_never_allows(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    profile = refunder("pol-broken", policy="broken@1")
    async with serving(client, settings, tmp_path, [profile]) as s:
        waiting = await s.refund("pol-broken", "small", RunStatus.WAITING_FOR_APPROVAL)
        [asked] = _events(s.runs, waiting.run_id, EventKind.POLICY_DECISION)
        assert asked["errored"] is True and asked["approvers"] == 1
        assert "cost_micros" in asked["reason"]
        assert DemoWorld(s.resources.ctx).ledger_count(run_id=waiting.run_id) == 0
        digest = pending_digest(waiting)
        await s.runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
        done = await until_status(s.runtime, waiting.run_id, RunStatus.COMPLETED)
        [approval] = _events(s.runs, done.run_id, EventKind.APPROVAL)
        assert approval["decided_by"] == "bob"


def test_a_malformed_policy_stops_the_worker_at_start_with_the_reason(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    bad = policies_file(
        tmp_path,
        "policies:\n- name: refunds\n  version: 3\n"
        "  cedar: 'permit(principal, action, resource when {'\n",
    )
    with pytest.raises(ConfigError) as stopped:
        composed(client, settings, tmp_path, [refunder("pol-bad")], bad)
    message = str(stopped.value)
    assert message.startswith("approval policy refunds@3: ") and "\n" not in message


def test_a_policy_reading_an_argument_the_tool_lacks_stops_the_worker_at_start(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    text = "policies:\n- name: tiers\n  version: 1\n  cedar: |\n" + "".join(
        f"    {line}\n" for line in UNKNOWN_ARGUMENT.strip().splitlines()
    )
    with pytest.raises(ConfigError) as stopped:
        composed(client, settings, tmp_path, [refunder("pol-tiers", "tiers@1")],
                 policies_file(tmp_path, text))  # fmt: skip
    message = str(stopped.value)
    assert message.startswith("approval policy tiers@1 (profile pol-tiers, tool issue_refund)")
    assert "customer_tier" in message and "\n" not in message


def test_a_profile_naming_a_policy_the_file_lacks_stops_the_worker(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="approval policy refunds@4 is not in the policies"):
        composed(client, settings, tmp_path, [refunder("pol-missing", "refunds@4")],
                 policies_file(tmp_path))  # fmt: skip


async def test_a_policy_errors_words_are_withheld_where_content_is_not_kept(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """Cedar's message may quote an argument's value: at privacy metadata it is not kept."""
    profile = refunder("pol-quiet", policy="broken@1", privacy="metadata")
    async with serving(client, settings, tmp_path, [profile]) as s:
        waiting = await s.refund("pol-quiet", "small", RunStatus.WAITING_FOR_APPROVAL)
        [asked] = _events(s.runs, waiting.run_id, EventKind.POLICY_DECISION)
        assert asked["errored"] is True and "cost_micros" not in str(asked)
        assert "withheld at privacy metadata" in asked["reason"]
