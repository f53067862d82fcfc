"""Run snapshots for tests that insert a run directly (`RunStore.begin`): the record
`run.begin` writes, with a plan of the given levels and tools."""

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.plan import RunPlan, ToolPlan
from agentrt.contracts.profiles import PrivacyLevel, Timeouts
from agentrt.contracts.snapshot import SnapshotRecord


def recorded(
    privacy: PrivacyLevel = "full",
    *,
    answer_level: PrivacyLevel = "full",
    tools: dict[str, ToolEffect] | None = None,
) -> SnapshotRecord:
    """A snapshot whose plan records `privacy`, `answer_level` and `tools` (name: effect)."""
    plans = [ToolPlan(name=name, effect=effect) for name, effect in (tools or {}).items()]
    plan = RunPlan(
        profile="p",
        model="",
        max_iterations=8,
        tools=plans,
        privacy=privacy,
        timeouts=Timeouts(),
        answer_level=answer_level,
    )
    return SnapshotRecord(plan=plan)
