"""One child per delegation, and the child's write once, when the worker PROCESS running the
parent and the child is SIGKILLed mid-delegation (workflows/children.py).

The parent `kteam` delegates to `ksupport`, whose refund (a non-idempotent write with a
reconcile probe) runs behind the child's own fence. A worker blocks at a fault point and
its process group is SIGKILLed there; a fresh worker replays the parent's history (its
child start is matched, not issued again: the child's id is derived from the parent's run
and call ids) and settles both runs. The ledger counts how often the refund really ran."""

import dataclasses
from pathlib import Path

import pytest
import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus

from agentrt.contracts.agents import child_run_id
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from tests.fence._kill import Killer
from tests.workflows._replay import assert_replays

PARENT, CHILD = "kteam", "ksupport"
FAST = {"write_seconds": 8, "write_heartbeat_seconds": 3, "schedule_to_start_seconds": 10}
PROFILES = {
    "profiles": [
        {"name": PARENT, "model": "scripted:demo", "agents": [CHILD], "approval": "none"},
        {
            "name": CHILD,
            "model": "scripted:demo",
            "tools": ["lookup_order", "issue_refund"],
            "approval": "none",
            "timeouts": FAST,
        },
    ]
}
REFUND = {"name": "issue_refund", "arguments": {"order_id": "1042", "amount_cents": 300}}
RULES = {
    "default_reply": "Nothing to do.",
    "rules": [
        {
            "name": "team",
            "match": {"contains": "team refund"},
            "steps": [
                {"tool_calls": [{"name": CHILD, "arguments": {"prompt": "child refund 1042"}}]},
                {"text": "The team refunded it."},
            ],
        },
        {
            "name": "child",
            "match": {"contains": "child refund"},
            "steps": [{"tool_calls": [REFUND]}, {"text": "Refunded 1042 (child)."}],
        },
    ],
}
# After the kill: a heartbeat or store-call timeout, the dead worker's sticky-queue timeout,
# and for the write killed after its effect the wait out of its attempt bound and the probe.
SETTLE_WITHIN = 90.0
POINTS = [
    "write.after_effect",  # inside the child's write: its effect ran, its step not recorded
    "child.before_record",  # the child completed; the parent's record of it not written
    # The parent recorded the child's start and the child's row is written, its begin not
    # completed (the process's second begin: the parent's was the first).
    "begin.after_write#2",
    # The child began; its first model call has not reached the provider (the process's
    # second model call, after the parent's first).
    "model.before_provider#2",
]
# A settled run's status in the database, and its workflow's in Temporal.
AGREE = {RunStatus.COMPLETED: WorkflowExecutionStatus.COMPLETED}


def _team(killer: Killer, tmp_path: Path) -> Killer:
    """The killer's workers serving the team's profiles and rules (files in `tmp_path`)."""
    profiles, rules = tmp_path / "team-profiles.yaml", tmp_path / "team-rules.yaml"
    profiles.write_text(yaml.safe_dump(PROFILES))
    rules.write_text(yaml.safe_dump(RULES))
    settings = killer.settings.replace(
        worker={"profiles_file": profiles}, providers={"rules_file": rules}
    )
    return dataclasses.replace(killer, settings=settings)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", POINTS)
async def test_kill_mid_delegation_starts_one_child_and_writes_once(
    point: str, killer: Killer, tmp_path: Path
) -> None:
    k = _team(killer, tmp_path)
    killed = await k.kill_at(point, "team refund please", profile=PARENT)
    run_id = killed.run_id
    kid = child_run_id(run_id, "r1.1")
    fresh = k.fresh()
    view = await k.settle(run_id, fresh, SETTLE_WITHIN)
    assert view.status is RunStatus.COMPLETED, fresh.log_tail()

    assert view.answer == "The team refunded it."

    runs = RunStore(k.parts.ctx)
    assert runs.get(run_id).children == [kid]  # type: ignore[union-attr]
    child = await k.runtime.result(kid)
    assert child.status is RunStatus.COMPLETED and child.parent_run_id == run_id
    assert DemoWorld(k.parts.ctx).ledger_count(run_id=kid) == 1  # the refund ran once
    [delegation] = [e for e in runs.events(run_id) if e.kind is EventKind.TOOL]
    assert delegation.payload["child_run_id"] == kid
    # The parent's answer is stored with the child's result, the child's own answer.
    assert delegation.payload["result"] == "Refunded 1042 (child)." == child.answer
    await _agree(k, [run_id, kid])

    history = await k.history(run_id)
    started = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    assert sum(1 for e in history.events if e.event_type == started) == 1
    await assert_replays(history)
    await assert_replays(await k.history(kid))


async def _agree(k: Killer, run_ids: list[str]) -> None:
    """Temporal and the database agree on the status of each run of the tree."""
    runs = RunStore(k.parts.ctx)
    for run_id in run_ids:
        row = runs.get(run_id)
        assert row is not None, run_id
        described = await k.client.get_workflow_handle(run_id).describe()
        assert described.status is AGREE[row.status], (run_id, row.status, described.status)
