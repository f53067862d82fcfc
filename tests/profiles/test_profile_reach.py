"""What a worker registers of what its profiles' tools may do (`RegisteredProfile.reach`,
the strongest declared effect) and of their typed answers: the MCP server's annotations
and output schemas (api/mcp/tools.py) are read from it. A toolbox not listed yet says
nothing (None), which the MCP server reads as a write: fail closed."""

import uuid

from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.contracts.profiles import Profile
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.demo import DemoWorld
from agentrt.store.ops.registry import ProfileRegistry, Registration
from agentrt.store.runs.record import RunStore
from tests.workflows._waiting import until

# The demo toolbox: lookup_order reads, set_record is an idempotent write, issue_refund a
# non-idempotent one (activities/toolbox/demo.py).
LOOK, TAG, PAY = "lookup_order", "set_record", "issue_refund"


def _demo(runs: RunStore, pending: list[str]) -> ToolRegistry:
    return ToolRegistry(demo_tools(DemoWorld(runs.ctx)), pending=pending)


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _profile(tools: list[str], **more: object) -> Profile:
    return Profile.model_validate({"name": f"r-{uuid.uuid4().hex[:8]}", "model": "s:m",
                                   "tools": tools, **more})  # fmt: skip


def test_reach_is_the_strongest_effect_and_unknown_while_a_toolbox_is_pending(
    runs: RunStore,
) -> None:
    registry = _demo(runs, ["crm"])
    reads, tags, pays = _profile([LOOK]), _profile([LOOK, TAG]), _profile([TAG, PAY])
    waiting, bare = _profile([LOOK], toolboxes=["crm"]), _profile([])
    catalog = ProfileCatalog({p.name: p for p in (reads, tags, pays, waiting, bare)}, registry)
    assert catalog.reach(reads.name) == "read_only"
    assert catalog.reach(tags.name) == "idempotent"
    assert catalog.reach(pays.name) == "writes"
    assert catalog.reach(bare.name) == "read_only"
    assert catalog.reach(waiting.name) is None  # the crm server has not listed its tools
    registry.add_group("crm", [])
    assert catalog.reach(waiting.name) == "read_only"


def test_reach_counts_the_agents_a_profile_delegates_to(runs: RunStore) -> None:
    registry = _demo(runs, ["crm"])
    payer, asker = _profile([PAY]), _profile([LOOK], toolboxes=["crm"])
    boss, manager = _profile([LOOK], agents=[payer.name]), _profile([], agents=[asker.name])
    catalog = ProfileCatalog({p.name: p for p in (payer, asker, boss, manager)}, registry)
    assert catalog.reach(boss.name) == "writes"  # its child pays
    assert catalog.reach(manager.name) is None  # its child's crm server has not listed


def test_the_registry_keeps_reach_and_output_schema(runs: RunStore) -> None:
    registry = ProfileRegistry(runs.ctx)
    typed, plain = _profile([], output_schema=SCHEMA), _profile([PAY])
    worker = registry.register([typed, plain], reach={typed.name: "read_only"})
    try:
        got, other = registry.get(typed.name), registry.all()[plain.name]
        assert got == RegisteredProfile.of(typed, None, "read_only")
        assert got is not None and got.output_schema == SCHEMA
        assert other.reach is None and other.output_schema is None
    finally:
        registry.withdraw(worker)


async def test_a_renewed_reach_is_registered_at_once(runs: RunStore) -> None:
    """A worker registers before its MCP servers list their tools (their reach unknown);
    once they have, the registration is written again without waiting for a beat."""
    registry = ProfileRegistry(runs.ctx)
    profile = _profile([])
    registration = Registration(registry, [profile], every=3600.0, reach={profile.name: None})
    try:
        assert (got := registry.get(profile.name)) is not None and got.reach is None
        registration.renew({profile.name: "idempotent"})

        async def renewed() -> bool:
            found = registry.get(profile.name)
            return found is not None and found.reach == "idempotent"

        await until(renewed, "the renewed reach registered")
    finally:
        registration.close()
    assert registry.get(profile.name) is None  # withdrawn, as ever
