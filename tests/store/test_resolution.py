"""The resolution of an ended run's unknown write (store/runs/resolution.py) on the real
database: attested or refused, one guarded write (two operators racing: one wins), never on
a run still going or a write that never ran, and its event after the run's last."""

import uuid

import pytest

from agentrt.contracts.enums import EventKind, PendingState, RunStatus
from agentrt.contracts.errors import (
    NothingToResolveError,
    ResolutionError,
    StaleResolutionError,
    UnattestedResolutionError,
)
from agentrt.contracts.reconcile_answer import WriteResolution, fence_id
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from agentrt.store.runs.resolution import resolve_write
from agentrt.store.security.attest import attest_resolution
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests.fence.test_fence_sql import claimed, race, resolve, settle, stamped


def _interrupted(ctx: StoreContext, runs: RunStore, parts: WorkerResources) -> tuple[str, str]:
    """A run that failed with its write's outcome unknown: (run id, fence token)."""
    run_id = begin_run(ctx, profile="auto", prompt="p")
    tok = claimed(ctx, run_id)
    resolve(ctx, run_id, tok)
    return run_id, tok


def _resolution(
    ctx: StoreContext, run_id: str, tok: str, by: str = "ops", **more: str
) -> WriteResolution:
    res = WriteResolution(call_id="r1.1", fence=fence_id(tok), outcome="applied",
                          note="seen in the ledger", resolved_by=by)  # fmt: skip
    res = res.model_copy(update=more)
    res.attestation = attest_resolution(ctx.sealer, run_id, res)
    return res


def test_an_ended_runs_unknown_write_is_resolved_once_with_its_event(
    parts: WorkerResources, runs: RunStore
) -> None:
    ctx = parts.ctx
    run_id, tok = _interrupted(ctx, runs, parts)
    with pytest.raises(NothingToResolveError):  # still running: the run decides
        resolve_write(ctx, run_id, _resolution(ctx, run_id, tok))
    settle(parts, run_id, RunStatus.FAILED)
    with pytest.raises(StaleResolutionError):
        resolve_write(ctx, run_id, _resolution(ctx, run_id, "another-token"))
    forged = _resolution(ctx, run_id, tok).model_copy(update={"resolved_by": "mallory"})
    with pytest.raises(UnattestedResolutionError):
        resolve_write(ctx, run_id, forged)
    view = runs.get(run_id)
    assert view is not None and view.pending_effect is not None  # nothing changed yet
    assert view.pending_effect.state is PendingState.OUTCOME_UNKNOWN

    resolve_write(ctx, run_id, _resolution(ctx, run_id, tok))
    after = runs.get(run_id)
    assert after is not None and after.pending_effect is None
    assert after.status is RunStatus.FAILED and after.revision == view.revision + 1
    events = runs.events(run_id)
    assert events[-1].kind is EventKind.WRITE_RESOLVED
    assert events[-1].sequence == events[-2].sequence + 1
    assert events[-1].payload["resolved_by"] == "ops"
    with pytest.raises(NothingToResolveError):
        resolve_write(ctx, run_id, _resolution(ctx, run_id, tok))


def test_two_operators_racing_one_wins(parts: WorkerResources, runs: RunStore) -> None:
    ctx = parts.ctx
    run_id, tok = _interrupted(ctx, runs, parts)
    settle(parts, run_id, RunStatus.FAILED)

    def by(who: str) -> str:
        try:
            resolve_write(ctx, run_id, _resolution(ctx, run_id, tok, by=who))
        except ResolutionError as exc:
            return exc.code
        return "resolved"

    outcomes = race(lambda: by("ann"), lambda: by("ben"))
    assert sorted(outcomes) == ["nothing_to_resolve", "resolved"], outcomes
    kinds = [e.kind for e in runs.events(run_id)]
    assert kinds.count(EventKind.WRITE_RESOLVED) == 1


def test_a_write_that_never_ran_and_a_run_without_one_have_nothing_to_resolve(
    parts: WorkerResources, runs: RunStore
) -> None:
    ctx = parts.ctx
    run_id = begin_run(ctx, profile="auto", prompt="p")
    tok = stamped(ctx, run_id)
    # A stamped fence on an ended run (the settle voids it).
    with ctx.sessions.begin() as s:
        s.query(RunRow).filter(RunRow.id == run_id).update({RunRow.status: "FAILED"})
    with pytest.raises(NothingToResolveError):
        resolve_write(ctx, run_id, _resolution(ctx, run_id, tok))
    nowhere = str(uuid.uuid4())
    with pytest.raises(NothingToResolveError):
        resolve_write(ctx, nowhere, _resolution(ctx, nowhere, tok))
    with pytest.raises(UnattestedResolutionError):  # attested for another run
        resolve_write(ctx, nowhere, _resolution(ctx, run_id, tok))


def test_a_resolved_run_leaves_the_attention_list(parts: WorkerResources, runs: RunStore) -> None:
    ctx = parts.ctx
    run_id, tok = _interrupted(ctx, runs, parts)
    with ctx.sessions.begin() as s:  # settled as the workflow settles an interrupted write
        s.query(RunRow).filter(RunRow.id == run_id).update(
            {RunRow.status: "FAILED", RunRow.termination_reason: "interrupted_write"}
        )
    listed = RunQuery(ctx).attention(visible_to=None, limit=500)
    assert run_id in [v.run_id for v in listed]
    resolve_write(ctx, run_id, _resolution(ctx, run_id, tok))
    listed = RunQuery(ctx).attention(visible_to=None, limit=500)
    assert run_id not in [v.run_id for v in listed]
