"""Runs inserted straight into the store (`RunStore.begin`), for tests that need a run row
without a workflow: one place for the `NewRun` every such test builds, and for moving the
fresh row to another status by hand (what the workflow's guarded writes would have done)."""

import uuid

from sqlalchemy import update

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.snapshot import SnapshotRecord
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import NewRun, RunStore


def new_run(
    run_id: str,
    *,
    profile: str = "p",
    snapshot: SnapshotRecord | None = None,
    prompt: str = "hi",
    initiator: str = "t",
    privacy: str = "full",
) -> NewRun:
    """The `NewRun` for `run_id`; an empty snapshot unless one is given."""
    return NewRun(
        run_id=run_id,
        profile=profile,
        snapshot=snapshot if snapshot is not None else SnapshotRecord(),
        prompt=prompt,
        initiator=initiator,
        privacy=privacy,
    )


def begin_run(
    ctx: StoreContext,
    run_id: str | None = None,
    *,
    profile: str = "p",
    snapshot: SnapshotRecord | None = None,
    prompt: str = "hi",
    initiator: str = "t",
    privacy: str = "full",
    status: RunStatus | None = None,
) -> str:
    """A new RUNNING run (its `run_started` event written), a fresh id unless one is given;
    then set to `status` by hand when one is given. Returns the run's id."""
    run_id = run_id or str(uuid.uuid4())
    made = new_run(run_id, profile=profile, snapshot=snapshot, prompt=prompt,
                   initiator=initiator, privacy=privacy)  # fmt: skip
    assert RunStore(ctx).begin(made), f"run {run_id} was already there"
    if status is not None:
        with ctx.sessions.begin() as s:
            s.execute(update(RunRow).where(RunRow.id == run_id).values(status=status.value))
    return run_id
