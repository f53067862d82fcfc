"""An operator resolves the unknown write of a run that ended (issue 40 item 3).

A run that failed with a write's outcome unknown keeps the write's fence (call, tool,
token, state) as evidence and needs an operator ("Needs attention": store/runs/query.py).
Once they have asked the target system, they say what it showed, applied or not applied,
with a note: the `WriteResolution` (contracts/reconcile_answer.py), attested for them by the
operator API or a client holding the seal key (store/security/attest.py). This records it, in one
transaction:

- a guarded UPDATE empties the fence: the run is ended, its fence still the one the
  resolution names (call and fence id) and still claimed. A second resolution, or one for
  an earlier fence, matches no row; nothing else of the run changes (terminal is terminal);
- a WRITE_RESOLVED event names the principal, the outcome and the note, after the run's
  last event, at the run's privacy level.

Nothing runs again: the run has ended. The run then leaves the attention list."""

from typing import Any

from sqlalchemy import func, select, update

from agentrt.contracts.enums import TERMINAL_STATUSES, EventKind, PendingState
from agentrt.contracts.errors import (
    NothingToResolveError,
    StaleResolutionError,
    UnattestedResolutionError,
)
from agentrt.contracts.reconcile_answer import WriteResolution, fence_id
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.store.db.context import StoreContext, rowcount, utcnow
from agentrt.store.db.tables import EventRow, RunRow
from agentrt.store.security import attest
from agentrt.store.steps.events import event_row, insert_event

_ENDED = [s.value for s in TERMINAL_STATUSES]
# A claimed fence: its write may have run. (A stamped one never did: the settle voids it.)
_CLAIMED = [PendingState.EXECUTING.value, PendingState.OUTCOME_UNKNOWN.value]
_EMPTY: dict[Any, Any] = {
    RunRow.pending_call_id: None,
    RunRow.pending_tool: None,
    RunRow.pending_token: None,
    RunRow.pending_state: None,
}


def resolve_write(ctx: StoreContext, run_id: str, resolution: WriteResolution) -> None:
    """Record `resolution` on the run's unknown write; raises a ResolutionError (nothing
    changed) when it is not attested, the run has no such write, or names another."""
    if not attest.resolution_authenticated(ctx.sealer, run_id, resolution):
        raise UnattestedResolutionError(f"run {run_id}: the resolution is not attested")
    with ctx.sessions.begin() as s:
        row = s.execute(
            select(RunRow.status, RunRow.pending_call_id, RunRow.pending_tool,
                   RunRow.pending_token, RunRow.pending_state, RunRow.snapshot)
            .where(RunRow.id == run_id)
        ).first()  # fmt: skip
        if row is None or row.status not in _ENDED or row.pending_state not in _CLAIMED:
            raise NothingToResolveError(f"run {run_id} has no ended write to resolve")
        token = row.pending_token
        if (
            row.pending_call_id != resolution.call_id
            or token is None
            or fence_id(token) != resolution.fence
        ):
            raise StaleResolutionError(f"run {run_id}: the resolution names another write")
        # The guard: the very fence read above, still claimed, on the ended run.
        emptied = s.execute(
            update(RunRow)
            .where(RunRow.id == run_id, RunRow.status.in_(_ENDED),
                   RunRow.pending_token == token, RunRow.pending_state.in_(_CLAIMED))
            .values({**_EMPTY, RunRow.updated_at: utcnow(),
                     RunRow.revision: RunRow.revision + 1})
            .execution_options(synchronize_session=False)
        )  # fmt: skip
        if not rowcount(emptied):
            raise NothingToResolveError(f"run {run_id}: the write was resolved already")
        last = s.scalar(select(func.max(EventRow.sequence)).where(EventRow.run_id == run_id))
        payload = {
            "call_id": resolution.call_id, "tool": row.pending_tool, "fence": resolution.fence,
            "state": row.pending_state, "outcome": resolution.outcome,
            "resolved_by": resolution.resolved_by, "authenticated": True,
            "note": resolution.note,
        }  # fmt: skip
        privacy = RunSnapshot.parse(row.snapshot).privacy
        sequence = (last or 0) + 1
        event = event_row(
            ctx.sealer, run_id, sequence, EventKind.WRITE_RESOLVED, 0, payload, privacy
        )
        insert_event(s, event)
        # Insert-or-ignore: should any other event have taken the place meanwhile, the
        # resolution must not stand without its record (the transaction rolls back).
        kind = s.scalar(
            select(EventRow.kind).where(EventRow.run_id == run_id, EventRow.sequence == sequence)
        )
        if kind != EventKind.WRITE_RESOLVED.value:
            raise NothingToResolveError(f"run {run_id}: the resolution met a concurrent event")
