"""A team within one budget (issue 43 item 3, workflows/children.py `_share`): a budgeted
parent that delegates to three children in one turn reserves a share of its room for
each before it starts them, each child runs within its share (its own ledger reserves
before each of its calls), and each share settles to what its child spent. The parent's
totals are the team's, and they stay at most its ceiling. Real dev server, database and
scripted model; workers in this process."""

from pathlib import Path
from typing import Any

from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.agents import child_run_id
from agentrt.contracts.budget import Budget
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.views import RunView
from tests.workflows._replay import assert_replays, fetch
from tests.workflows._team import Team, child_rule, delegating, name, profile, team

CALLS = ("r1.1", "r1.2", "r1.3")


def _team(ceiling: int) -> tuple[str, str, list[Any], list[dict[str, Any]]]:
    parent, child = name("lead"), name("helper")
    profiles = [
        profile(parent, agents=[child], approval="none", max_output_tokens=50,
                budget=Budget(max_tokens=ceiling)),
        profile(child, tools=["lookup_order"], approval="none", max_output_tokens=50,
                description="Looks orders up."),
    ]  # fmt: skip
    rules = [
        delegating("three", *[(child, f"look up {n}") for n in ("1042", "1043", "1044")]),
        child_rule("look up", answer="Looked up."),
    ]
    return parent, child, profiles, rules


async def _lead(t: Team, parent: str) -> tuple[str, RunView, list[RunView]]:
    """The parent's run of "three lookups", completed, and its three children's ends."""
    run_id = await t.runtime.start(parent, "three lookups")
    view = await t.runtime.result(run_id)
    assert view.status is RunStatus.COMPLETED, view
    return run_id, view, [await t.runtime.result(child_run_id(run_id, c)) for c in CALLS]


def _spent(t: Team, run_id: str) -> int:
    """The tokens of the run's own model calls, from its events."""
    return sum(
        int(e.payload["prompt_tokens"]) + int(e.payload["completion_tokens"])
        for e in t.runs.events(run_id)
        if e.kind is EventKind.LLM
    )


async def test_three_children_run_within_their_shares_and_the_team_within_the_ceiling(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    ceiling = 20_000
    parent, _, profiles, rules = _team(ceiling)
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id, view, ends = await _lead(t, parent)
        kids = [end.run_id for end in ends]
        shares = []
        for kid, end in zip(kids, ends, strict=True):
            assert end.status is RunStatus.COMPLETED, end
            state = await t.runtime.budget(kid)
            assert state.budget is not None and state.budget.max_tokens is not None
            shares.append(state.budget.max_tokens)  # its share of the parent's room
            assert state.spent.total_tokens == _spent(t, kid) <= shares[-1]
        # Three shares and the parent's next call's: each a quarter of the room then left.
        assert sum(shares) <= ceiling
        team_spend = _spent(t, run_id) + sum(_spent(t, kid) for kid in kids)
        assert view.prompt_tokens + view.completion_tokens == team_spend <= ceiling
        await assert_replays(await fetch(client, run_id))


async def test_shares_too_small_for_a_childs_call_stop_each_child_before_it(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A tight ceiling: each child's share is below its first call's worst case, so each
    child ends budget_exhausted having spent nothing, the parent reads three failed calls
    and answers, and the team's spend stays at most the ceiling."""
    ceiling = 3_000
    parent, _, profiles, rules = _team(ceiling)
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id, view, ends = await _lead(t, parent)
        for kid_view in ends:
            kid = kid_view.run_id
            assert kid_view.status is RunStatus.FAILED, kid_view
            assert kid_view.termination_reason is TerminationReason.BUDGET_EXHAUSTED
            assert kid_view.prompt_tokens + kid_view.completion_tokens == 0
            failed = t.runs.events(kid)[-1].payload
            assert failed["reserved"]["tokens"] > failed["room"]["tokens"]
            assert failed["room"]["tokens"] == failed["budget"]["max_tokens"] < ceiling // 3
        delegations = [e for e in t.runs.events(run_id) if e.kind is EventKind.TOOL]
        assert len(delegations) == 3 and all(d.payload["is_error"] for d in delegations)
        assert view.prompt_tokens + view.completion_tokens == _spent(t, run_id) <= ceiling
        await assert_replays(await fetch(client, run_id))
