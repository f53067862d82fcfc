"""A team of agents for the child-agent tests (tests/workflows/test_child_agents.py,
tests/api/test_child_views.py): profiles in code on the scripted model and the demo
toolbox, served by a worker in this process on a queue of the test's own."""

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

from temporalio.client import Client

from agentrt import AgentRuntime, Profile, Settings, build_worker
from agentrt.activities.providers.scripted import RuleSet, ScriptedProvider
from agentrt.contracts.enums import EventKind
from agentrt.contracts.views import EventView
from agentrt.store.runs.record import RunStore
from tests.conftest import profiles_in_code

REFUND = {"name": "issue_refund", "arguments": {"order_id": "1042", "amount_cents": 300}}
TYPED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def name(base: str) -> str:
    return f"{base}_{uuid.uuid4().hex[:6]}"


def delegating(word: str, *calls: tuple[str, str], answer: str = "Team done.") -> dict[str, Any]:
    """A parent's rule: on `word`, call each (agent, prompt) in one turn, then answer."""
    tool_calls = [{"name": a, "arguments": {"prompt": p}} for a, p in calls]
    return {
        "name": word,
        "match": {"contains": word},
        "steps": [{"tool_calls": tool_calls}, {"text": answer}],
    }


def child_rule(word: str, *first: dict[str, Any], answer: str) -> dict[str, Any]:
    """A child's rule: on `word`, make the `first` calls (if any), then answer."""
    steps = [{"tool_calls": list(first)}] if first else []
    return {"name": word, "match": {"contains": word}, "steps": [*steps, {"text": answer}]}


class Team(NamedTuple):
    runtime: AgentRuntime
    runs: RunStore
    client: Client


@asynccontextmanager
async def team(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    profiles: list[Profile],
    rules: list[dict[str, Any]],
    **limits: int,
) -> AsyncIterator[Team]:
    """A worker in this process serving `profiles` (each on one queue of the test's own)
    on the scripted model following `rules`."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    served = [p.model_copy(update={"task_queue": queue}) for p in profiles]
    ruleset = RuleSet.model_validate({"default_reply": "Nothing to do.", "rules": rules})
    local = profiles_in_code(settings, queue, tmp_path).replace(limits=limits)
    worker, resources = build_worker(
        client, local, providers={"scripted": ScriptedProvider(ruleset)}, profiles=served
    )
    with resources:
        async with worker:
            runs = RunStore(resources.ctx)
            yield Team(AgentRuntime(client, runs, queue), runs, client)


def profile(name: str, **more: Any) -> Profile:
    return Profile(name=name, model="scripted:demo", **more)


def tool_events(t: Team, run_id: str) -> list[EventView]:
    """The run's tool events in call order (parallel calls commit in any order)."""
    tools = [e for e in t.runs.events(run_id) if e.kind is EventKind.TOOL]
    return sorted(tools, key=lambda e: e.sequence)


REFUNDED = "Refunded 1042 (child)."


def refund_team(approval: str) -> tuple[str, list[Profile], list[dict[str, Any]]]:
    """(parent, profiles, rules): a parent with no approvals of its own whose prompt "team
    refund" delegates to a child that refunds order 1042 (its refund under `approval`) and
    answers REFUNDED."""
    parent, child = name("team"), name("support")
    profiles = [
        profile(parent, agents=[child], approval="none"),
        profile(child, tools=["lookup_order", "issue_refund"], approval=approval,
                description="Refunds orders."),
    ]  # fmt: skip
    rules = [
        delegating("team refund", (child, "child refund order 1042")),
        child_rule("child refund", REFUND, answer=REFUNDED),
    ]
    return parent, profiles, rules
