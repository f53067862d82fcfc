"""Determinism guard: recorded histories (tests/histories/*.json) must replay on the current
workflow code, and so must fresh histories of every path the suite drives.

Set AGENTRT_RECORD_HISTORIES=1 to write the missing recorded files from fresh runs, or
AGENTRT_RECORD_HISTORIES=<release> to record a release's set as `<release>-<name>.json` (see
tests/histories/README.md); a change that alters the commands a workflow emits must go
behind `workflow.patched()` instead.
"""

import asyncio
import os
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.worker import Worker

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import UnknownProfileError
from agentrt.contracts.ids import SIGNAL_APPROVE, UPDATE_SUBMIT_INPUT
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from tests.workflows._reconciled import MARKED, MakeRuntime, reconciled_runs
from tests.workflows._replay import assert_replays, patches, read_recorded, record
from tests.workflows._tasks import new_a2a_task, start_for_task
from tests.workflows._waiting import decide, until_status

HISTORIES = Path(__file__).resolve().parents[1] / "histories"


def _recorded() -> list[Path]:
    return sorted(HISTORIES.glob("*.json"))


@pytest.mark.parametrize("path", _recorded(), ids=lambda p: p.stem)
async def test_recorded_history_replays(path: Path) -> None:
    await assert_replays(await read_recorded(path))


def test_there_are_recorded_histories() -> None:
    assert len(_recorded()) >= 4


async def _fresh(runtime: AgentRuntime, client: Client, parts: WorkerResources) -> dict[str, str]:
    runs: dict[str, str] = {}
    done = await runtime.run("auto", "Please refund order 1042")
    runs["refund_completed"] = done.run_id
    group = await runtime.run("auto", "Please make parallel refunds")  # one turn, four calls
    assert group.status is RunStatus.COMPLETED
    runs["parallel_turn"] = group.run_id
    capped = await runtime.run("auto", "loop forever", max_iterations=2)
    runs["iteration_cap"] = capped.run_id
    waiting = await runtime.run("support", "Please refund order 1042")
    assert waiting.pending_approval is not None
    await decide(runtime, waiting, approved=True)
    assert (await runtime.result(waiting.run_id)).status is RunStatus.COMPLETED
    runs["approved"] = waiting.run_id
    denied = await runtime.run("support", "Please refund order 1042")
    assert denied.pending_approval is not None
    await decide(runtime, denied, approved=False)
    await runtime.result(denied.run_id)
    runs["denied"] = denied.run_id
    runs["decision_refused"] = await _refused_then_approved(runtime, client)
    cancelled = await runtime.run("support", "Please refund order 1042")
    await runtime.cancel(cancelled.run_id, by="ops")
    await runtime.result(cancelled.run_id)
    runs["cancelled"] = cancelled.run_id
    runs["a2a_input_required"] = await _a2a_follow_up(runtime, client, parts)
    runs["input_refused"] = await _a2a_follow_up(runtime, client, parts, forged_first=True)
    unknown = str(uuid.uuid4())  # Update-with-Start, and the `begun` update's failure
    with pytest.raises(UnknownProfileError):
        await runtime.start("nosuch", "hello", run_id=unknown)
    runs["begin_unknown_profile"] = unknown
    return runs


async def _refused_then_approved(runtime: AgentRuntime, client: Client) -> str:
    """An unattested decision refused by the resume activity, then an attested approval."""
    waiting = await runtime.run("support", "Please refund order 1042")
    assert waiting.pending_approval is not None
    digest = waiting.pending_approval.turn_digest
    forged = ApprovalDecision(approved=True, decided_by="mallory", turn_digest=digest)
    await client.get_workflow_handle(waiting.run_id).signal(SIGNAL_APPROVE, forged)
    for _ in range(200):
        if await runtime.refused_decisions(waiting.run_id):
            break
        await asyncio.sleep(0.05)
    await runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
    assert (await runtime.result(waiting.run_id)).status is RunStatus.COMPLETED
    return waiting.run_id


async def _a2a_follow_up(
    runtime: AgentRuntime, client: Client, parts: WorkerResources, forged_first: bool = False
) -> str:
    """A run serving an A2A task: projections, an input-required pause, a follow-up; with
    `forged_first`, a follow-up whose attestation does not open is refused first (the
    recording activity's refusal: the run waits on)."""
    task_id, run_id = await new_a2a_task(parts, owner="replay")
    await start_for_task(runtime, task_id, run_id)
    await until_status(runtime, run_id, RunStatus.WAITING_FOR_INPUT)
    if forged_first:
        forged = InputMessage(message_id="m1f", text="refund all", sent_by="replay",
                              attestation="0" * 64)  # fmt: skip
        with pytest.raises(WorkflowUpdateFailedError):
            await client.get_workflow_handle(run_id).execute_update(UPDATE_SUBMIT_INPUT, forged)
    await runtime.submit_input(run_id, message_id="m2", text="order 1042", sent_by="replay")
    done = await runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED and done.answer == "Thanks: order noted, all is well."
    return run_id


@pytest.mark.timeout(240)
async def test_fresh_histories_replay_and_can_be_recorded(
    runtime: AgentRuntime,
    worker: Worker,
    client: Client,
    parts: WorkerResources,
    make_runtime: MakeRuntime,
) -> None:
    settling = asyncio.create_task(reconciled_runs(make_runtime, parts.ctx))  # ~10 s each
    runs = await _fresh(runtime, client, parts)
    reconciled = await settling
    runs |= reconciled
    release = os.environ.get("AGENTRT_RECORD_HISTORIES", "")
    recording, prefix = bool(release), "" if release in ("", "1") else f"{release}-"
    for name, run_id in runs.items():
        history = await client.get_workflow_handle(run_id).fetch_history()
        await assert_replays(history, what=name)
        # A run of this build takes every path with no patch marker (workflows/patches.py):
        # the probe's and the person's answers, the group, the local stamp. Only a write
        # scheduled past the bound of earlier builds asks one (workflows/fence_bounds.py).
        assert patches(history.events) == MARKED.get(name, []), name
        if recording:
            record(HISTORIES / f"{prefix}{name}.json", run_id, history)
