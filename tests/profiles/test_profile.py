"""The typed Profile: written in Python as in YAML, one loader onto it, and an unknown key
(a misspelt `aproval:`) refused with the key and the profile named."""

import runpy
from pathlib import Path

import pytest
from pydantic import ValidationError

import agentrt
from agentrt import ConfigError, Profile
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import (
    DEFAULT_MAX_PARALLEL_TOOLS,
    MAX_PARALLEL_TOOLS_CEILING,
    Timeouts,
)
from agentrt.contracts.registered import RegisteredProfile
from agentrt.core.profiles import checked_profiles, load_profiles

WORKERS = Path(__file__).resolve().parents[2] / "workers"


def test_profile_and_what_goes_with_it_are_public() -> None:
    for name in ("Profile", "Budget", "Timeouts", "GuardrailConfig", "ToolboxContext"):
        assert name in agentrt.__all__
    assert agentrt.Profile is Profile


def test_a_misspelt_key_in_python_names_the_key_and_the_profile() -> None:
    with pytest.raises(ValidationError, match=r"profile 'support': unknown key aproval"):
        Profile(name="support", model="scripted:demo", aproval="none")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match=r"profile 'p': unknown key timeouts\.tool_secs"):
        Profile.model_validate({"name": "p", "model": "a:b", "timeouts": {"tool_secs": 1}})
    with pytest.raises(ValidationError, match=r"unknown key guardrails\.deny"):
        Profile.model_validate({"name": "p", "model": "a:b", "guardrails": {"deny": ["x"]}})


def test_a_misspelt_key_in_yaml_is_a_config_error_naming_file_key_and_profile(
    tmp_path: Path,
) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(
        "profiles:\n"
        "  - {name: reader, model: 'scripted:demo'}\n"
        "  - {name: support, model: 'scripted:demo', aproval: none}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_profiles(path)
    message = str(err.value)
    assert str(path) in message and "profile 'support'" in message
    assert "unknown key aproval (did you mean approval?)" in message  # the fix, in one line
    assert "\n" not in message
    path.write_text("profiles:\n  - {name: support, model: nocolon}\n")
    with pytest.raises(ConfigError, match=r"profile 'support'.*model: .*provider:model"):
        load_profiles(path)
    path.write_text("profile:\n  - {name: support, model: 'a:b'}\n")
    with pytest.raises(ConfigError, match=r"unknown key profile \(did you mean profiles\?\)"):
        load_profiles(path)


def test_python_and_yaml_profiles_are_the_same_type_and_pass_the_same_checks() -> None:
    shipped = load_profiles(WORKERS / "profiles.yaml")
    support = shipped["support"]
    written = Profile(
        name="support",
        instructions=support.instructions,
        model="scripted:demo",
        toolboxes=["demo"],
        max_iterations=5,
        privacy="full",
        approval="writes",
        publish=True,
        description=support.description,
    )
    assert written == support
    assert RegisteredProfile.of(written).digest == RegisteredProfile.of(support).digest
    with pytest.raises(ConfigError, match="declares the profile 'support' twice"):
        checked_profiles([written, support], "the test's profiles")
    bad = Profile(
        name="slow",
        model="a:b",
        guardrails={"deny_patterns": ["(a)\\1"]},
    )
    with pytest.raises(ConfigError, match=r"'slow' deny_patterns .* not a linear-time pattern"):
        checked_profiles([bad], "the test's profiles")


def test_the_registration_says_what_clients_need_and_whether_writes_go_unapproved() -> None:
    auto = Profile(name="auto", model="a:b", tools=["refund"], approval="none", task_queue="q")
    reg = RegisteredProfile.of(auto)
    assert (reg.name, reg.task_queue, reg.writes_unapproved) == ("auto", "q", True)
    # No tool: nothing runs unapproved, whatever `approval` says.
    assert not RegisteredProfile.of(
        Profile(name="x", model="a:b", approval="none")
    ).writes_unapproved
    changed = RegisteredProfile.of(auto.model_copy(update={"instructions": "other"}))
    assert changed.digest != reg.digest


def test_the_examples_python_profiles_are_its_yaml_profiles() -> None:
    """examples/agentrt-example-toolbox shows both ways; they must say the same. Run from
    its file: the suite's environment does not install the example package."""
    example = WORKERS.parent / "examples" / "agentrt-example-toolbox"
    written = runpy.run_path(str(example / "agentrt_example_toolbox" / "profiles.py"))
    assert checked_profiles(written["PROFILES"], "the example") == load_profiles(
        example / "profiles.yaml"
    )


def test_a_profile_limits_a_turns_parallel_calls_and_old_plans_run_one_at_a_time() -> None:
    assert Profile(name="p", model="a:b").max_parallel_tools == DEFAULT_MAX_PARALLEL_TOOLS == 4
    assert Profile(name="p", model="a:b", max_parallel_tools=1).max_parallel_tools == 1
    for bad in (0, MAX_PARALLEL_TOOLS_CEILING + 1):
        with pytest.raises(ValidationError, match="max_parallel_tools"):
            Profile(name="p", model="a:b", max_parallel_tools=bad)
    # A plan recorded before the field existed (a run begun by an older worker) decodes
    # as one call at a time: the run goes on as it began.
    plan = RunPlan(profile="p", model="a:b", max_iterations=5, tools=[], privacy="full",
                   timeouts=Timeouts())  # fmt: skip
    recorded = plan.model_dump(exclude={"max_parallel_tools"})
    assert RunPlan.model_validate(recorded).max_parallel_tools == 1
