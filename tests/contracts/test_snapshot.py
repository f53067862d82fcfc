"""The run snapshot is parsed in one place, with one set of defaults."""

import json

import pytest

from agentrt.contracts.messages import ToolSpec
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import Budget, GuardrailConfig, Timeouts
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.store.runs.answer import ceiling_of


def _begun() -> str:
    """A snapshot as run.begin writes it: the full plan beside the profile's texts."""
    plan = RunPlan(
        profile="support",
        model="scripted:demo",
        max_iterations=5,
        tools=[],
        privacy="redacted",
        timeouts=Timeouts(),
        answer_level="redacted",
        fallback_model="scripted:spare",
        budget=Budget(max_tokens=900),
    )
    return json.dumps(
        {
            "instructions": "Be brief.",
            "tools": [{"name": "lookup", "description": "d", "parameters": {"type": "object"}}],
            "guardrails": GuardrailConfig(output=[]).model_dump(),
            "plan": plan.model_dump(mode="json"),
        }
    )


def test_a_snapshot_written_at_begin_reads_back_whole() -> None:
    snap = RunSnapshot.parse(_begun())
    assert snap.instructions == "Be brief."
    assert snap.tools == [ToolSpec(name="lookup", description="d", parameters={"type": "object"})]
    assert snap.guardrails.output == []
    assert snap.plan is not None
    assert (snap.plan.model, snap.plan.fallback_model) == ("scripted:demo", "scripted:spare")
    assert snap.plan.budget == Budget(max_tokens=900)
    assert (snap.privacy, snap.answer_level) == ("redacted", "redacted")


@pytest.mark.parametrize("raw", [None, "", "{}", "null", "not json", '{"plan": 3}'])
def test_a_snapshot_without_a_readable_plan_fails_closed(raw: str | None) -> None:
    snap = RunSnapshot.parse(raw)
    assert snap.plan is None
    assert (snap.privacy, snap.answer_level) == ("metadata", "metadata")
    assert ceiling_of(raw, None) == "metadata"


def test_a_plan_recorded_before_a_field_existed_reads_as_that_version_meant() -> None:
    # Plans from before answer levels kept answers in full (RunPlan's default then and
    # now); before budgets, a run had none. The privacy level was always recorded.
    snap = RunSnapshot.parse('{"plan": {"privacy": "full", "model": "scripted:demo"}}')
    assert (snap.privacy, snap.answer_level) == ("full", "full")
    assert snap.plan is not None and snap.plan.budget is None
    assert snap.guardrails == GuardrailConfig()  # the defaults: secrets redacted both ways


def test_the_answer_ceiling_is_the_snapshots_level_tightened() -> None:
    raw = '{"plan": {"privacy": "full", "answer_level": "full"}}'
    assert ceiling_of(raw, None) == "full"
    assert ceiling_of(raw, "redacted") == "redacted"
    assert ceiling_of('{"plan": {"answer_level": "none"}}', "redacted") == "none"
