"""Approval policies at the real boundary (tests/workflows/test_approval_policy.py,
tests/security/test_policy_decider.py, tests/starter/test_policy_dry_run.py): a worker in
this process, the scripted model, the demo refund tool and a policies file of the test's."""

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

from temporalio.client import Client

from agentrt import AgentRuntime, Profile, Settings, build_worker
from agentrt.activities.providers.scripted import RuleSet, ScriptedProvider
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import RunView
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.conftest import profiles_in_code

REFUNDS = """
// Small refunds approve themselves.
permit(principal, action == Action::"approve", resource == Tool::"issue_refund")
  when { context.args.amount_cents < 5000 };
// Large refunds need two people.
permit(principal, action == Action::"ask_2", resource == Tool::"issue_refund")
  when { context.args.amount_cents >= 50000 };
// Refunds on a blocked order are denied.
permit(principal, action == Action::"deny", resource == Tool::"issue_refund")
  when { context.args.order_id == "666" };
"""
# Errs on a run's call only: the run's cost is unknown (no price for the scripted model),
# so `cost_micros` is absent and Cedar cannot judge; a person decides.
BROKEN = """
permit(principal, action == Action::"approve", resource)
  when { context.spend.cost_micros < 1000 };
"""
# An argument no refund has: refused when the worker starts (core/policies.py
# check_against_tools), before any run could reach it.
UNKNOWN_ARGUMENT = """
permit(principal, action == Action::"approve", resource)
  when { context.args.customer_tier == "gold" };
"""
POLICIES = f"""
policies:
- name: refunds
  version: 3
  cedar: |
{"".join("    " + line + chr(10) for line in REFUNDS.strip().splitlines())}
- name: broken
  version: 1
  cedar: |
{"".join("    " + line + chr(10) for line in BROKEN.strip().splitlines())}
"""


def refund_rule(word: str, cents: int, order: str = "1042") -> dict[str, Any]:
    call = {"name": "issue_refund", "arguments": {"order_id": order, "amount_cents": cents}}
    return {
        "name": word,
        "match": {"contains": word},
        "steps": [{"tool_calls": [call]}, {"text": f"{word}: done."}],
    }


RULES = [
    refund_rule("small refund", 300),
    refund_rule("large refund", 90000),
    refund_rule("middle refund", 20000),
    refund_rule("blocked refund", 300, order="666"),
]


class Served(NamedTuple):
    runtime: AgentRuntime
    runs: RunStore
    resources: WorkerResources

    async def refund(self, profile: str, size: str, expect: RunStatus) -> RunView:
        """Alice asks `profile` for a `size` refund ("small", "large", ...): the run once it
        settles or waits, which must be `expect`."""
        view = await self.runtime.run(profile, f"{size} refund please", initiator="alice")
        assert view.status is expect, (view.status, view.error_type)
        return view


def policies_file(tmp_path: Path, text: str = POLICIES) -> Path:
    path = tmp_path / f"policies-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(text)
    return path


def refunder(name: str, policy: str = "refunds@3", **more: Any) -> Profile:
    return Profile(
        name=name, model="scripted:demo", tools=["issue_refund"], approval="writes",
        approval_policy=policy, **more,
    )  # fmt: skip


def composed(
    client: Client, settings: Settings, tmp_path: Path, profiles: list[Profile], policies: Path
) -> tuple[Any, WorkerResources, str]:
    """The worker (not started), its resources and its queue."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    served = [p.model_copy(update={"task_queue": queue}) for p in profiles]
    ruleset = RuleSet.model_validate({"default_reply": "Nothing to do.", "rules": RULES})
    local = profiles_in_code(settings, queue, tmp_path).replace(worker={"policies_file": policies})
    worker, resources = build_worker(
        client, local, providers={"scripted": ScriptedProvider(ruleset)}, profiles=served
    )
    return worker, resources, queue


@asynccontextmanager
async def serving(
    client: Client, settings: Settings, tmp_path: Path, profiles: list[Profile]
) -> AsyncIterator[Served]:
    worker, resources, queue = composed(
        client, settings, tmp_path, profiles, policies_file(tmp_path)
    )
    with resources:
        async with worker:
            runs = RunStore(resources.ctx)
            yield Served(AgentRuntime(client, runs, queue), runs, resources)
