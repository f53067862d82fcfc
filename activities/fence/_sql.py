"""The write fence's transitions: every statement that reads or writes a run's fence.

States of the fence (four columns of the run row, named once below): empty (no write in
flight) → stamped (token issued) → executing (claimed by the write activity) → empty again
when its step is recorded (the clear, in the record's own statement), or outcome_unknown
when the write was interrupted after its claim. A stamped fence nobody claimed is emptied
by `resolve`, or by `void_unclaimed` when its run settles. An outcome_unknown fence found
"not applied" is voided (`void_in`): emptied but for its token, so a retried reconcile
step knows the void for its own (`voided_before`).
"""

from typing import Any

from sqlalchemy import bindparam, case, exists, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Update

from agentrt.contracts.enums import PendingState, RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.run import FenceRequest, FenceState
from agentrt.store.db.context import StoreContext, rowcount, utcnow
from agentrt.store.db.tables import RunRow, ToolResultRow
from agentrt.store.steps.write import Part, one_update

# The fence: the call it guards, its tool, the token of the one execution that may claim
# it, and its state (a PendingState value). Every statement below uses these names.
CALL_ID, TOOL, TOKEN, STATE = (
    RunRow.pending_call_id,
    RunRow.pending_tool,
    RunRow.pending_token,
    RunRow.pending_state,
)
EMPTY = {CALL_ID: None, TOOL: None, TOKEN: None, STATE: None}

_STAMPED, _EXECUTING = PendingState.STAMPED.value, PendingState.EXECUTING.value
_RUNNING = RunStatus.RUNNING.value

# The dedup ledger holds the call's result: the write already ran and was recorded.
_RECORDED = exists().where(ToolResultRow.idempotency_key == bindparam("key"))

# The guarded writes of every fenced write, built once (executed with parameters). No ORM
# object of the row is loaded when they run: nothing to synchronise.
_STAMP = (
    update(RunRow)
    .where(RunRow.id == bindparam("run_id"), RunRow.status == _RUNNING, CALL_ID.is_(None),
           ~_RECORDED)
    .values({CALL_ID: bindparam("call_id"), TOOL: bindparam("tool"), TOKEN: bindparam("token"),
             STATE: _STAMPED, RunRow.updated_at: bindparam("now")})
    .execution_options(synchronize_session=False)
)  # fmt: skip
_CLAIM = (
    update(RunRow)
    .where(RunRow.id == bindparam("run_id"), TOKEN == bindparam("token"), STATE == _STAMPED,
           RunRow.status == _RUNNING)
    .values({STATE: _EXECUTING, RunRow.updated_at: bindparam("now"),
             RunRow.revision: RunRow.revision + 1})
    .execution_options(synchronize_session=False)
)  # fmt: skip


def stamp(ctx: StoreContext, req: FenceRequest, key: str) -> str:
    """Stamp the in-flight write; returns a FenceState value. Retrying is safe.

    The common case is one statement: the guarded UPDATE also checks that the dedup
    ledger holds no result for the call (NOT EXISTS), in the same statement and under
    the same row lock. Only when it matches no row are the reasons read.
    """
    params = {"run_id": req.run_id, "key": key, "call_id": req.call_id, "tool": req.tool,
              "token": req.token, "now": utcnow()}  # fmt: skip
    # On PostgreSQL the common case is one round trip: the statement alone, autocommit.
    if one_update(ctx, _STAMP, params):
        return FenceState.STAMPED
    # It matched no row: the same guarded UPDATE again, and the reasons, in one
    # transaction (the row may have changed in between).
    with ctx.sessions.begin() as s:
        if rowcount(s.execute(_STAMP, params)):
            return FenceState.STAMPED
        if s.scalar(select(_RECORDED), {"key": key}):
            return FenceState.ALREADY_DONE
        row = s.execute(
            select(RunRow.status, CALL_ID, TOKEN).where(RunRow.id == req.run_id)
        ).first()
        if row is None or row[0] != _RUNNING:
            return FenceState.RUN_NOT_RUNNING
        _, call_id, token = row
        if token == req.token:
            return FenceState.STAMPED  # our own stamp, seen again on a retry
        if call_id != req.call_id:
            return FenceState.BUSY
        # A fence for this very call from an earlier execution (a reset, a duplicate):
        # stamped-but-unclaimed may be replaced, anything else is refused.
        restamped = s.execute(
            update(RunRow)
            .where(RunRow.id == req.run_id, CALL_ID == req.call_id, STATE == _STAMPED)
            .values({TOKEN: req.token, RunRow.updated_at: utcnow()})
        )
        return FenceState.STAMPED if rowcount(restamped) else FenceState.INTERRUPTED


def claim(ctx: StoreContext, run_id: str, token: str) -> ErrorType | None:
    """stamped → executing for this token, on a RUNNING run: None when claimed, else why
    not (the run has no row, or the fence is not this token's to claim). Do not write."""
    if one_update(ctx, _CLAIM, {"run_id": run_id, "token": token, "now": utcnow()}):
        return None
    # Refused (rare: a reset, a duplicate, a cancelled run): say whether the run exists.
    with ctx.read_rows() as c:
        found = c.execute(select(RunRow.id).where(RunRow.id == run_id)).first()
    return ErrorType.FENCE_REJECTED if found is not None else ErrorType.RUN_NOT_FOUND


def resolve(ctx: StoreContext, req: FenceRequest, key: str) -> str:
    """After a write activity failed: decide what really happened, from the database.

    - its step is recorded → ALREADY_DONE (only the report was lost);
    - still stamped → NEVER_CLAIMED: nothing ran; the fence is voided so the write may
      be scheduled again under a fresh token;
    - claimed → INTERRUPTED: the outcome is unknown; the fence stays as evidence.
    """
    with ctx.sessions.begin() as s:
        if s.scalar(select(_RECORDED), {"key": key}):
            return FenceState.ALREADY_DONE
        res = s.execute(
            update(RunRow)
            .where(RunRow.id == req.run_id, TOKEN == req.token, STATE == _STAMPED)
            .values({**EMPTY, RunRow.updated_at: utcnow()})
        )
        if rowcount(res):
            return FenceState.NEVER_CLAIMED
        s.execute(
            update(RunRow)
            .where(RunRow.id == req.run_id, CALL_ID == req.call_id, STATE == _EXECUTING)
            .values({STATE: PendingState.OUTCOME_UNKNOWN.value, RunRow.updated_at: utcnow()})
        )
        row = s.execute(select(CALL_ID).where(RunRow.id == req.run_id)).first()
        if row is not None and row[0] is None:
            # No fence and no record: the stamp itself never landed.
            return FenceState.NEVER_CLAIMED
        return FenceState.INTERRUPTED


def _clear(prefix: str) -> Update:
    """The fence emptied if the token is still its own: binds `{prefix}run_id`,
    `{prefix}token`, `{prefix}now`. (On SQLite a step's clear runs in the trigger of
    migration 0021, the same UPDATE: tests/fence/test_fence_sql.py holds both to it.)"""
    return (
        update(RunRow)
        .where(RunRow.id == bindparam(f"{prefix}run_id"), TOKEN == bindparam(f"{prefix}token"))
        .values({**EMPTY, RunRow.updated_at: bindparam(f"{prefix}now")})
    )


def clear_part(run_id: str, token: str, fault: str = "record.before_clear") -> Part:
    """The fence clear as a part of the write's recorded step (store/steps/write.py): the
    step and the clear land together, in one statement on PostgreSQL."""
    return Part("clear", {"run_id": run_id, "token": token, "now": utcnow()}, fault, _clear)


def void_unclaimed() -> dict[str, Any]:
    """A run settles: a stamped but unclaimed fence is void, its write never ran (and its
    claim, which needs a RUNNING run, can no longer land). A claimed one (executing,
    outcome_unknown) stays as evidence. The values the settle's own guarded UPDATE carries,
    so the void costs no statement of its own."""
    return {col.key: case((STATE == _STAMPED, None), else_=col) for col in EMPTY}


_UNKNOWN = PendingState.OUTCOME_UNKNOWN.value


def void_unknown(ctx: StoreContext, run_id: str, token: str, key: str) -> bool:
    """A reconcile probe answered "not applied": the interrupted write's fence (this token,
    outcome_unknown, its run RUNNING, no step recorded for the call) is emptied, so the
    write may be stamped afresh. True too when it is void already: this very step
    committed the void, then its worker died before reporting, and the step is retried
    (`voided_before`). False otherwise: leave the run as it is."""
    with ctx.sessions.begin() as s:
        return void_in(s, run_id, token, key) or voided_before(s, run_id, token, key)


def was_voided(ctx: StoreContext, run_id: str, token: str, key: str) -> bool:
    """`voided_before`, read on its own: a retried reconcile step asks it before its probe,
    so a void on record is acted on whatever the probe would say now."""
    with ctx.sessions.begin() as s:
        return voided_before(s, run_id, token, key)


def voided_before(s: Session, run_id: str, token: str, key: str) -> bool:
    """Whether the interrupted write's fence of `token` was voided already: its run still
    RUNNING, the fence empty but for the voided token (`void_in` leaves it, and nothing
    else writes a token without a call), and no step recorded for the call. A later stamp
    replaces the token: a void that is not the fence's last answers False."""
    row = s.execute(select(RunRow.status, CALL_ID, TOKEN).where(RunRow.id == run_id)).first()
    if row is None or row[0] != _RUNNING or row[1] is not None or row[2] != token:
        return False
    return not s.scalar(select(_RECORDED), {"key": key})


# A void empties the fence but keeps the voided token, with no call: the mark by which a
# retried step knows the void is its own (`voided_before`). A fence with no call is empty
# to every other statement here (the stamp, the claim, the views read the call).
_VOID = {CALL_ID: None, TOOL: None, STATE: None}


def void_in(s: Session, run_id: str, token: str, key: str) -> bool:
    """`void_unknown` in a transaction the caller holds (a person's "not applied" answer:
    activities/fence/answer.py)."""
    res = s.execute(
        update(RunRow)
        .where(RunRow.id == run_id, TOKEN == token, STATE == _UNKNOWN,
               RunRow.status == _RUNNING, ~_RECORDED)
        .values({**_VOID, RunRow.updated_at: utcnow(), RunRow.revision: RunRow.revision + 1})
        .execution_options(synchronize_session=False),
        {"key": key},
    )  # fmt: skip
    return bool(rowcount(res))


def clear(ctx: StoreContext, run_id: str, token: str) -> None:
    """The fence emptied if the token is still its own (its step is already recorded)."""
    with ctx.sessions.begin() as s:
        s.execute(_clear(""), {"run_id": run_id, "token": token, "now": utcnow()})
