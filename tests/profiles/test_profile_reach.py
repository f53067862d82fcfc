"""What a worker registers of what its profiles' tools may do (`RegisteredProfile.reach`,
the strongest declared effect) and of their typed answers: the MCP server's annotations
and output schemas (api/mcp/tools.py) are read from it. A toolbox not listed yet says
nothing (None), which the MCP server reads as a write: fail closed."""

import uuid

from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.toolbox.decorator import tool
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.profiles import Profile, RegisteredProfile
from agentrt.store.ops.registry import ProfileRegistry, Registration
from agentrt.store.runs.record import RunStore
from tests.workflows._waiting import until


@tool(effect=ToolEffect.READ_ONLY)
def look(order_id: str) -> str:
    """Look an order up."""
    return order_id


@tool(effect=ToolEffect.IDEMPOTENT_WRITE)
def tag(order_id: str) -> str:
    """Tag an order (again: the same tag)."""
    return order_id


@tool  # no effect declared: a non-idempotent write
def pay(order_id: str) -> str:
    """Pay an order."""
    return order_id


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _profile(tools: list[str], **more: object) -> Profile:
    return Profile.model_validate({"name": f"r-{uuid.uuid4().hex[:8]}", "model": "s:m",
                                   "tools": tools, **more})  # fmt: skip


def test_reach_is_the_strongest_effect_and_unknown_while_a_toolbox_is_pending() -> None:
    registry = ToolRegistry([look, tag, pay], pending=["crm"])
    reads, tags, pays = _profile(["look"]), _profile(["look", "tag"]), _profile(["tag", "pay"])
    waiting, bare = _profile(["look"], toolboxes=["crm"]), _profile([])
    catalog = ProfileCatalog({p.name: p for p in (reads, tags, pays, waiting, bare)}, registry)
    assert catalog.reach(reads.name) == "read_only"
    assert catalog.reach(tags.name) == "idempotent"
    assert catalog.reach(pays.name) == "writes"
    assert catalog.reach(bare.name) == "read_only"
    assert catalog.reach(waiting.name) is None  # the crm server has not listed its tools
    registry.add_group("crm", [])
    assert catalog.reach(waiting.name) == "read_only"


def test_reach_counts_the_agents_a_profile_delegates_to() -> None:
    registry = ToolRegistry([look, pay], pending=["crm"])
    payer, asker = _profile(["pay"]), _profile(["look"], toolboxes=["crm"])
    boss, manager = _profile(["look"], agents=[payer.name]), _profile([], agents=[asker.name])
    catalog = ProfileCatalog({p.name: p for p in (payer, asker, boss, manager)}, registry)
    assert catalog.reach(boss.name) == "writes"  # its child pays
    assert catalog.reach(manager.name) is None  # its child's crm server has not listed


def test_the_registry_keeps_reach_and_output_schema(runs: RunStore) -> None:
    registry = ProfileRegistry(runs.ctx)
    typed, plain = _profile([], output_schema=SCHEMA), _profile(["pay"])
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
