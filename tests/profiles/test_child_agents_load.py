"""Child agents refused when profiles load (contracts/agents.py): an unknown child, with the
closest valid name; a cycle, with its path; a child named like a tool. And a delegation's
effect class: the strongest among the child's tools and its own children's, recursively.
The runs themselves: tests/workflows/test_child_agents.py."""

from pathlib import Path

import pytest

from agentrt import Profile, tool
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.contracts.agents import check_agents, child_run_id, delegation_effect
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.core.profiles import checked_profiles, load_profiles


def _p(name: str, **more: object) -> Profile:
    return Profile(name=name, model="scripted:demo", **more)


def _set(*profiles: Profile) -> dict[str, Profile]:
    return {p.name: p for p in profiles}


def test_an_unknown_child_is_refused_with_the_closest_valid_name() -> None:
    profiles = _set(_p("team", agents=["suport"]), _p("support"), _p("billing"))
    with pytest.raises(ConfigError, match="unknown agent 'suport'; the closest is 'support'"):
        check_agents(profiles)


def test_an_unknown_child_with_nothing_close_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown agent 'zz'; known: \['a'\]"):
        check_agents(_set(_p("a", agents=["zz"])))


@pytest.mark.parametrize(
    ("profiles", "path"),
    [
        (_set(_p("a", agents=["b"]), _p("b", agents=["a"])), "a -> b -> a"),
        (_set(_p("a", agents=["a"])), "a -> a"),
        (_set(_p("a", agents=["b"]), _p("b", agents=["c"]), _p("c", agents=["b"])), "b -> c -> b"),
    ],
    ids=["two", "self", "below-the-root"],
)
def test_a_cycle_is_refused_with_its_path(profiles: dict[str, Profile], path: str) -> None:
    with pytest.raises(ConfigError, match=f"cycle: {path}"):
        check_agents(profiles)


def test_the_profiles_file_refuses_a_cycle(tmp_path: Path) -> None:
    """YAML alike: the file's profiles pass the same check as they load."""
    file = tmp_path / "profiles.yaml"
    file.write_text(
        "profiles:\n"
        "  - {name: a, model: 'scripted:demo', agents: [b]}\n"
        "  - {name: b, model: 'scripted:demo', agents: [a]}\n"
    )
    with pytest.raises(ConfigError, match="cycle: a -> b -> a"):
        load_profiles(file)
    with pytest.raises(ConfigError, match="unknown agent 'c'"):
        checked_profiles([_p("a", agents=["c"])], "the worker builder's profiles")


@tool(effect=ToolEffect.READ_ONLY)
def peek(item: str) -> str:
    """Read an item."""
    return item


@tool(effect=ToolEffect.IDEMPOTENT_WRITE)
def note(item: str) -> str:
    """Note an item."""
    return item


def test_a_child_named_like_a_tool_is_refused_at_the_worker() -> None:
    registry = ToolRegistry([peek, note])
    with pytest.raises(ConfigError, match="'peek' is both a tool and an agent"):
        ProfileCatalog(_set(_p("a", agents=["peek"]), _p("peek")), registry)


def test_the_delegation_effect_is_the_strongest_of_the_tree() -> None:
    registry = ToolRegistry([peek, note])
    catalog = ProfileCatalog(
        _set(
            _p("top", agents=["mid"]),
            _p("mid", tools=["peek"], agents=["leaf"]),
            _p("leaf", tools=["note"]),
            _p("idle"),
        ),
        registry,
    )
    assert catalog.agent_effect("mid", registry) is ToolEffect.IDEMPOTENT_WRITE
    assert catalog.agent_effect("leaf", registry) is ToolEffect.IDEMPOTENT_WRITE
    assert catalog.agent_effect("idle", registry) is ToolEffect.READ_ONLY
    # A tool no registry knows fails closed, as an undeclared effect does.
    undeclared = ToolEffect.resolve(None)
    unknown = delegation_effect("x", _set(_p("x", tools=["gone"])), lambda _: undeclared)
    assert unknown is ToolEffect.NON_IDEMPOTENT_WRITE


def test_the_child_run_id_is_one_per_call() -> None:
    assert child_run_id("run-1", "r1.1") == child_run_id("run-1", "r1.1")
    assert child_run_id("run-1", "r1.1") != child_run_id("run-1", "r1.2")
    assert child_run_id("run-1", "r1.1") != child_run_id("run-2", "r1.1")
