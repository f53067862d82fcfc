"""Issue 43 item 4: a delegation's worker PROCESS SIGKILLed at the child's first steps,
beside what tests/fence/test_child_kill.py covers (inside the child's write, and after the
child completed before the parent recorded it):

- `begin.after_write#2`: the parent recorded the child's start and the child's run row is
  written, but the child's begin did not complete (the process's second begin: the
  parent's was the first);
- `model.before_provider#2`: the child began, its first model call was scheduled and had
  not reached the provider (the process's second model call, after the parent's first).

A fresh worker settles the tree. Each time: one child for the call, its refund once, the
parent's answer stored with the child's result in its tool event, and Temporal and the
database agreeing on the status of every run of the tree; both histories replay."""

from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus

from agentrt.contracts.agents import child_run_id
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from tests.fence._kill import Killer
from tests.fence.test_child_kill import PARENT, SETTLE_WITHIN, _team
from tests.workflows._replay import assert_replays

POINTS = ["begin.after_write#2", "model.before_provider#2"]
# A settled run's status in the database, and its workflow's in Temporal.
AGREE = {RunStatus.COMPLETED: WorkflowExecutionStatus.COMPLETED}


async def _agree(k: Killer, run_ids: list[str]) -> None:
    runs = RunStore(k.parts.ctx)
    for run_id in run_ids:
        row = runs.get(run_id)
        assert row is not None, run_id
        described = await k.client.get_workflow_handle(run_id).describe()
        assert described.status is AGREE[row.status], (run_id, row.status, described.status)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", POINTS)
async def test_kill_at_the_childs_first_steps_settles_one_tree(
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
    assert DemoWorld(k.parts.ctx).ledger_count(run_id=kid) == 1  # the child's write, once
    [delegation] = [e for e in runs.events(run_id) if e.kind is EventKind.TOOL]
    assert delegation.payload["child_run_id"] == kid
    assert delegation.payload["result"] == "Refunded 1042 (child)." == child.answer
    await _agree(k, [run_id, kid])

    history = await k.history(run_id)
    started = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    assert sum(1 for e in history.events if e.event_type == started) == 1
    await assert_replays(history)
    await assert_replays(await k.history(kid))
