"""Seeded slices of the fuzz job's in-process surfaces (bench/fuzz_local.py,
bench/fuzz_typed.py): rules and profiles files, tool arguments from the model (@tool,
TypedTool), the MCP wrapper's schema check, output schemas and typed answers; plus the
loader bugs the job found, kept as regression tests."""

from pathlib import Path

import pytest

from agentrt.activities.providers.scripted import load_rules
from agentrt.contracts.errors import ConfigError, RulesFileError
from agentrt.core.profiles import load_profiles
from agentrt.workers.compose import WorkerResources
from bench.fuzz_core import LogTrap
from bench.fuzz_local import files_surface, tools_surface
from bench.fuzz_typed import typed_surface

FIXTURES = Path(__file__).parent.parent / "fixtures"
CASES = 60


@pytest.mark.parametrize(
    "content", [b"\x8a\xff rules", b"[" * 1200 + b"]" * 1200], ids=["not-utf8", "too-deep"]
)
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_an_unreadable_config_file_is_a_typed_error(
    tmp_path: Path, content: bytes, suffix: str
) -> None:
    path = tmp_path / f"f{suffix}"
    path.write_bytes(content)
    with pytest.raises(RulesFileError, match="rules file"):
        load_rules(path)
    with pytest.raises(ConfigError, match="profiles file"):
        load_profiles(path)


def test_fuzzed_rules_and_profiles_files_load_or_raise_their_typed_error() -> None:
    with LogTrap() as trap:
        tallies = files_surface(
            FIXTURES / "rules.yaml", FIXTURES / "profiles.yaml", CASES, None, trap
        )
    for t in tallies:
        assert t.cases == CASES and t.accepted > 0 and t.rejected > 0, t
        assert t.failures == [], (t.surface, t.failures)


def test_fuzzed_tool_arguments_are_refused_before_anything_runs(parts: WorkerResources) -> None:
    with LogTrap() as trap:
        tallies = tools_surface(parts.engine, parts.ctx, CASES, None, trap)
    for t in tallies:
        assert t.cases == CASES and t.accepted > 0 and t.rejected > 0, t
        assert t.failures == [], (t.surface, t.failures)


def test_fuzzed_output_schemas_and_typed_answers_stay_typed_and_linear() -> None:
    """bench/fuzz_typed.py: schemas load or are refused, typed; answers get a verdict within
    a bound linear in the text, never an exception (issue 41)."""
    with LogTrap() as trap:
        tallies = typed_surface(CASES, None, trap)
    for t in tallies:
        assert t.cases == CASES and t.accepted > 0 and t.rejected > 0, t
        assert t.failures == [], (t.surface, t.failures)
