"""Budgets that cannot be overshot, end to end on the real dev server with the scripted
model: each model call reserves its worst case first (workflows/budget.py), and a call
that does not fit is never made. The conversation here would overshoot under the old
check made after a call (its second call reads a long tool result): the reservation stops
the run before that call, its spend at most its ceiling, on both databases."""

import json
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client

from agentrt import Toolbox, tool
from agentrt.contracts.budget import Allowance, BudgetState
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason, ToolEffect
from agentrt.contracts.views import RunView
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.render.events import event_text
from agentrt.workers.compose import WorkerResources, build
from tests._built import serving_runtime
from tests.workflows._replay import replayer
from tests.workflows._waiting import until
from tests.workflows.test_models import llm_events, scripted_settings, tokens
from tests.workflows.test_replay import HISTORIES

PER_TOKEN = 0.001  # the `priced` provider: USD 1000 per 1M tokens, in and out
REPORT = "r" * 8000  # the tool result: 2000 prompt tokens to the scripted model
CEILING_TOKENS = 1500  # the first call's worst case fits; the second's (past 8000) cannot
CEILING_USD = 1.5
# Streamed a word every PACE_MS: the answering call stays in flight long enough for the
# budget query to see its reservation.
ANSWER = "Done: the report is fetched, read and summed up."
PACE_MS = 200
RULES = {
    "default_reply": "No rule.",
    "rules": [{"name": "report", "match": {"contains": "report"}, "steps": [
        {"tool_calls": [{"name": "fetch_report", "arguments": {}}]},
        {"text": ANSWER},
    ]}],
}  # fmt: skip


@tool(effect=ToolEffect.READ_ONLY)
def fetch_report() -> str:
    """Fetch the long report."""
    return REPORT


def profile(name: str, model: str, budget: dict[str, float]) -> dict[str, Any]:
    return {"name": name, "instructions": "I", "model": model, "toolboxes": ["reports"],
            "approval": "none", "max_output_tokens": 50, "budget": budget}  # fmt: skip


PROFILES = [
    profile("roomy", "unpriced:demo", {"max_tokens": 10**6}),
    profile("tight", "unpriced:demo", {"max_tokens": CEILING_TOKENS}),
    profile("tight-cost", "priced:demo", {"max_cost_usd": CEILING_USD}),
]


@dataclass
class World:
    parts: WorkerResources
    settings: Settings


@pytest.fixture(scope="module")
def world(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    d = tmp_path_factory.mktemp("budget")
    mine = scripted_settings(settings, d, RULES, PROFILES, [])
    mine = mine.replace(providers={"scripted_pace_ms": PACE_MS})
    parts = build(mine, toolboxes=[Toolbox("reports", [fetch_report])])
    yield World(parts, mine)
    parts.close()


@pytest_asyncio.fixture
async def runtime(client: Client, world: World) -> AsyncIterator[AgentRuntime]:
    async with serving_runtime(client, world.parts, world.settings) as served:
        yield served


async def test_every_call_spends_at_most_what_it_reserved(runtime: AgentRuntime) -> None:
    """The worst case is real: the request carries the reply bound, and each call's usage
    stays within its reservation. Unbounded, this conversation spends past both ceilings."""
    done = await runtime.run("roomy", "Fetch the report")
    assert done.status is RunStatus.COMPLETED and done.answer == ANSWER
    made = llm_events(await runtime.events(done.run_id))
    assert len(made) == 2
    for c in made:
        assert tokens(c) <= c["reserved_tokens"]
    first, second = made
    assert first["reserved_tokens"] <= CEILING_TOKENS < second["reserved_tokens"]
    # The old check, made after a call, let the second call through: it overshot.
    assert tokens(first) < CEILING_TOKENS < tokens(first) + tokens(second)
    assert tokens(first) * PER_TOKEN < CEILING_USD < (tokens(first) + tokens(second)) * PER_TOKEN


async def _stopped_before_the_call(
    runtime: AgentRuntime, name: str
) -> tuple[RunView, dict[str, Any]]:
    view = await runtime.run(name, "Fetch the report")
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.BUDGET_EXHAUSTED
    events = await runtime.events(view.run_id)
    # Round 1's call and its tool ran; round 2's call was never made.
    assert [e.kind for e in events] == [EventKind.RUN_STARTED, EventKind.LLM, EventKind.TOOL,
                                        EventKind.RUN_FAILED]  # fmt: skip
    (first,) = llm_events(events)
    failed = events[-1].payload
    assert failed["reason"] == "budget_exhausted" and failed["error_type"] == "BudgetExhausted"
    assert tokens(failed) == tokens(first) == view.prompt_tokens + view.completion_tokens
    # The event shows why: the next call's worst case against the room the budget had left.
    assert failed["reserved"]["tokens"] > 8000
    # And the CLI shows it: each call's reservation, and the stop's worst case and room.
    lines = [event_text(e).plain for e in events]
    assert "reserved" in lines[1] and "room left" in lines[-1], lines
    history = await runtime._client.get_workflow_handle(view.run_id).fetch_history()
    result = await replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
    path = HISTORIES / f"next-{name}_reserved_stop.json"
    if os.environ.get("AGENTRT_RECORD_HISTORIES") == "1" and not path.exists():
        data = {"workflow_id": view.run_id, "history": json.loads(history.to_json())}
        path.write_text(json.dumps(data, indent=1))
    return view, failed


async def test_a_token_ceiling_stops_the_run_before_a_call_that_could_pass_it(
    runtime: AgentRuntime,
) -> None:
    view, failed = await _stopped_before_the_call(runtime, "tight")
    assert view.prompt_tokens + view.completion_tokens <= CEILING_TOKENS
    assert failed["budget"] == {"max_tokens": CEILING_TOKENS, "max_cost_usd": None}
    room = failed["room"]["tokens"]
    assert room == CEILING_TOKENS - tokens(failed) < failed["reserved"]["tokens"]


async def test_a_cost_ceiling_stops_the_run_before_a_call_that_could_pass_it(
    runtime: AgentRuntime,
) -> None:
    view, failed = await _stopped_before_the_call(runtime, "tight-cost")
    assert view.cost_usd is not None and view.cost_usd <= CEILING_USD
    assert failed["budget"] == {"max_tokens": None, "max_cost_usd": CEILING_USD}
    assert failed["reserved"]["cost_usd"] > failed["room"]["cost_usd"]
    assert failed["room"]["cost_usd"] == pytest.approx(CEILING_USD - view.cost_usd)


async def test_the_budget_query_shows_the_call_in_flight_reserved_then_the_spend(
    runtime: AgentRuntime,
) -> None:
    """`AgentRuntime.budget` (and GET /runs/{id}/budget): while a model call is in flight
    its reservation holds the room left; once the run ended, nothing is reserved and the
    spend is the run's."""
    run_id = await runtime.start("roomy", "Fetch the report")

    seen: list[BudgetState] = []

    async def in_flight() -> bool:  # the workflow's ledger, until a call holds room
        seen.append(await runtime.budget(run_id))
        return bool(seen[-1].reserved.tokens)

    await until(in_flight, "a model call holding its reservation")
    state = seen[-1]
    assert state.budget is not None and state.budget.max_tokens == 10**6
    assert state.reserved.tokens == 10**6 - state.spent.total_tokens  # all the room left
    assert state.room.tokens == 0
    done = await runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED
    after = await runtime.budget(run_id)
    assert after.reserved == Allowance(tokens=0, cost_usd=0.0)
    assert after.spent.total_tokens == done.prompt_tokens + done.completion_tokens
    assert after.room.tokens == 10**6 - after.spent.total_tokens
