"""Models end to end on the real dev server: two OpenAI-compatible endpoints (real HTTP
servers on 127.0.0.1, each with its key from the environment), costs from a price table on
the run (unknown price → NULL), and token and cost budgets ending FAILED budget_exhausted."""

import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from temporalio.client import Client

from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.views import EventView
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources, build
from tests._built import serving_runtime
from tests.activities.test_openai_provider import Canned, FakeServer, completion, tool_call
from tests.workflows._replay import replayer

PER_TOKEN = 0.001  # the `priced` provider: USD 1000 per 1M tokens, in and out
TOOLS = ["lookup_order", "issue_refund"]
RULES = {
    "default_reply": "No rule.",
    "rules": [{"name": "spend", "match": {"contains": "spend"}, "steps": [
        {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "1042"}}]},
        {"tool_calls": [{"name": "issue_refund",
                         "arguments": {"order_id": "1042", "amount_cents": 100}}]},
        {"text": "Done."},
    ]}],
}  # fmt: skip


def profile(name: str, model: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "instructions": "I", "model": model, "tools": TOOLS,
            "approval": "none", **more}  # fmt: skip


# With the scripted model's token count (a token per 4 characters, at least 1; 5 per tool
# call), round 1 of "spend" uses 8 tokens and round 2 at least 10 more: these budgets would
# let round 1 through and be overshot by round 2 were they checked only after each call.
# Reserved before each call, they stop the run before round 1 (tests/workflows/
# test_budget_reserve.py has a run stopped between two calls).
PROFILES = [
    profile("local-agent", "local:llama3", tools=["lookup_order"]),
    profile("cloud-agent", "openai:gpt-test", tools=[]),
    profile("priced", "priced:demo"),
    profile("unpriced", "unpriced:demo"),
    profile("token-budget", "unpriced:demo", budget={"max_tokens": 11}),
    profile("cost-budget", "priced:demo", budget={"max_cost_usd": 0.015}),
    profile(
        "local-budget", "local:llama3", tools=[], budget={"max_tokens": 10**5}, max_output_tokens=64
    ),
]


@dataclass
class World:
    parts: WorkerResources
    settings: Settings
    local: FakeServer
    cloud: FakeServer


def scripted_settings(
    settings: Settings,
    d: Path,
    rules: dict[str, Any],
    profiles: list[dict[str, Any]],
    providers: list[dict[str, Any]],
) -> Settings:
    """The suite's settings with these rules, profiles and providers (files in `d`), and
    the scripted model as `scripted`, `priced` (USD 1000 per 1M tokens) and `unpriced`."""
    priced = {"name": "priced", "prices": {"default": {"input": 1000, "output": 1000}}}
    (d / "rules.yaml").write_text(yaml.safe_dump(rules))
    (d / "profiles.yaml").write_text(yaml.safe_dump({"profiles": profiles}))
    (d / "providers.yaml").write_text(yaml.safe_dump({"providers": [*providers, priced]}))
    return settings.replace(
        providers={
            "rules_file": d / "rules.yaml",
            "file": d / "providers.yaml",
            "scripted_providers": "scripted,priced,unpriced",
        },
        worker={"profiles_file": d / "profiles.yaml"},
    )


@pytest.fixture(scope="module")
def world(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    local, cloud = FakeServer(), FakeServer()
    for s in (local, cloud):
        threading.Thread(target=s.httpd.serve_forever, daemon=True).start()
    mine = scripted_settings(settings, tmp_path_factory.mktemp("models"), RULES, PROFILES, [
        {"name": "local", "base_url": local.base_url, "api_key_env": "AGENTRT_T_LOCAL_KEY",
         "prices": {"default": {"input": 0, "output": 0}}},
        {"name": "openai", "base_url": cloud.base_url, "api_key_env": "AGENTRT_T_CLOUD_KEY",
         "prices": {"models": {"gpt-test": {"input": 2.5, "output": 10}}}},
    ])  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTRT_T_LOCAL_KEY", "local-secret")
        mp.setenv("AGENTRT_T_CLOUD_KEY", "cloud-secret")
        parts = build(mine)
    yield World(parts, mine, local, cloud)
    parts.close()
    for s in (local, cloud):
        s.stop()


@pytest_asyncio.fixture
async def rt(client: Client, world: World) -> AsyncIterator[AgentRuntime]:
    async with serving_runtime(client, world.parts, world.settings) as runtime:
        yield runtime


def llm_events(events: list[EventView]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.kind is EventKind.LLM]


def tokens(p: dict[str, Any]) -> int:
    return int(p["prompt_tokens"]) + int(p["completion_tokens"])


async def test_two_endpoints_one_profile_each_with_cost_on_the_run(
    rt: AgentRuntime, world: World
) -> None:
    world.local.replies += [
        Canned(body=completion({"tool_calls": [tool_call("x", "lookup_order",
                                                         '{"order_id": "1042"}')]}, None)),
        Canned(body=completion({"content": "Order 1042 is fine."})),
    ]  # fmt: skip
    world.cloud.replies.append(Canned(body=completion({"content": "Hello from the cloud."})))
    local = await rt.run("local-agent", "How is order 1042?")
    cloud = await rt.run("cloud-agent", "Hi")
    assert (local.status, local.answer) == (RunStatus.COMPLETED, "Order 1042 is fine.")
    assert (cloud.status, cloud.answer) == (RunStatus.COMPLETED, "Hello from the cloud.")
    assert [s.body["model"] for s in world.local.seen] == ["llama3", "llama3"]
    assert {s.headers["authorization"] for s in world.local.seen} == {"Bearer local-secret"}
    assert [s.body["model"] for s in world.cloud.seen] == ["gpt-test"]
    assert world.cloud.seen[0].headers["authorization"] == "Bearer cloud-secret"
    assert local.cost_usd == 0.0  # a free model: known zero, not unknown
    assert cloud.cost_usd == pytest.approx((42 * 2.5 + 7 * 10) / 1_000_000)
    (call,) = llm_events(await rt.events(cloud.run_id))
    assert call["model"] == "openai:gpt-test" and call["cost_usd"] == cloud.cost_usd


async def test_price_table_cost_per_call_and_summed_unknown_price_is_null(
    rt: AgentRuntime, world: World
) -> None:
    priced = await rt.run("priced", "spend")
    assert priced.status is RunStatus.COMPLETED and priced.answer == "Done."
    calls = llm_events(await rt.events(priced.run_id))
    assert len(calls) == 3
    for c in calls:
        assert c["cost_usd"] == pytest.approx(tokens(c) * PER_TOKEN)
    assert priced.cost_usd == pytest.approx(sum(c["cost_usd"] for c in calls))
    assert priced.prompt_tokens + priced.completion_tokens == sum(map(tokens, calls))
    done = next(e for e in await rt.events(priced.run_id) if e.kind is EventKind.RUN_COMPLETED)
    assert done.payload["cost_usd"] == pytest.approx(priced.cost_usd)

    unpriced = await rt.run("unpriced", "spend")
    assert unpriced.status is RunStatus.COMPLETED
    assert unpriced.cost_usd is None  # NULL, never a silent 0
    calls = llm_events(await rt.events(unpriced.run_id))
    assert [c["cost_usd"] for c in calls] == [None, None, None]
    assert unpriced.prompt_tokens > 0


async def _exhausted(rt: AgentRuntime, world: World, profile: str) -> list[EventView]:
    view = await rt.run(profile, "spend")
    assert view.status is RunStatus.FAILED
    assert view.outcome is Outcome.FAILED
    assert view.termination_reason is TerminationReason.BUDGET_EXHAUSTED
    events = await rt.events(view.run_id)
    # The check made after a call let round 1 through and round 2 overshoot (round 2's
    # reply spent it). The reservation made before each call (workflows/budget.py) stops
    # the run before round 1: its worst case (the prompt's bytes and the reply's bound of
    # 4096 tokens) is past either ceiling, so no model and no tool is called.
    assert [e.kind for e in events] == [EventKind.RUN_STARTED, EventKind.RUN_FAILED]
    assert DemoWorld(world.parts.ctx).ledger_count(run_id=view.run_id) == 0
    failed = events[-1].payload
    assert failed["reason"] == "budget_exhausted" and failed["error_type"] == "BudgetExhausted"
    assert tokens(failed) == 0 == view.prompt_tokens + view.completion_tokens
    assert failed["cost_usd"] == view.cost_usd == 0.0  # nothing spent, at a known cost
    assert failed["reserved"]["tokens"] > 4096  # the call it did not make
    # The history replays on the current code.
    history = await rt._client.get_workflow_handle(view.run_id).fetch_history()
    result = await replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
    return events


async def test_token_budget_below_the_first_calls_worst_case_makes_no_call(
    rt: AgentRuntime, world: World
) -> None:
    events = await _exhausted(rt, world, "token-budget")
    failed = events[-1].payload
    assert failed["budget"] == {"max_tokens": 11, "max_cost_usd": None}
    assert failed["room"] == {"tokens": 11, "cost_usd": None}
    assert failed["reserved"]["cost_usd"] is None  # unpriced, and a token budget needs none


async def test_cost_budget_below_the_first_calls_worst_case_makes_no_call(
    rt: AgentRuntime, world: World
) -> None:
    events = await _exhausted(rt, world, "cost-budget")
    failed = events[-1].payload
    assert failed["room"] == {"tokens": None, "cost_usd": 0.015}
    assert failed["reserved"]["cost_usd"] > 0.015
    assert events[-1].payload["budget"] == {"max_tokens": None, "max_cost_usd": 0.015}


async def test_a_budgeted_request_carries_its_reply_bound_over_http(
    rt: AgentRuntime, world: World
) -> None:
    """The worst case a budget reserves is real: the endpoint is told the reply bound
    (and a run without a budget sends none)."""
    world.local.replies.append(Canned(body=completion({"content": "Bounded."})))
    done = await rt.run("local-budget", "Hi")
    assert (done.status, done.answer) == (RunStatus.COMPLETED, "Bounded.")
    assert world.local.seen[-1].body["max_tokens"] == 64
    (call,) = llm_events(await rt.events(done.run_id))
    assert tokens(call) <= call["reserved_tokens"]
    assert all("max_tokens" not in s.body for s in world.cloud.seen)
