"""The write fence: stamp, claim and resolve, each one guarded write on the run row.

States of `agent_run.pending_*`: empty (no write in flight) → stamped (token issued) →
executing (claimed by the write activity) → cleared when its step is recorded, or
outcome_unknown when the write was interrupted after its claim.
"""

from sqlalchemy import bindparam, select, update

from agentrt.contracts.enums import PendingState, RunStatus
from agentrt.contracts.run import FenceState
from agentrt.store.context import StoreContext, rowcount, utcnow
from agentrt.store.rows import RunRow, ToolResultRow

# The two guarded writes of every fenced write, built once (executed with parameters).
_STAMP = (
    update(RunRow)
    .where(
        RunRow.id == bindparam("run_id"),
        RunRow.status == RunStatus.RUNNING.value,
        RunRow.pending_call_id.is_(None),
        ~select(ToolResultRow.idempotency_key)
        .where(ToolResultRow.idempotency_key == bindparam("key"))
        .exists(),
    )
    .values(
        pending_call_id=bindparam("call_id"),
        pending_tool=bindparam("tool"),
        pending_token=bindparam("token"),
        pending_state=PendingState.STAMPED.value,
        updated_at=bindparam("now"),
    )
    # No ORM object of the row is loaded when these run: nothing to synchronise.
    .execution_options(synchronize_session=False)
)
_CLAIM = (
    update(RunRow)
    .where(
        RunRow.id == bindparam("run_id"),
        RunRow.pending_token == bindparam("token"),
        RunRow.pending_state == PendingState.STAMPED.value,
        RunRow.status == RunStatus.RUNNING.value,
    )
    .values(
        pending_state=PendingState.EXECUTING.value,
        updated_at=bindparam("now"),
        revision=RunRow.revision + 1,
    )
    .execution_options(synchronize_session=False)
)


class FenceStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def stamp(
        self, *, run_id: str, call_id: str, tool: str, token: str, idempotency_key: str
    ) -> str:
        """Stamp the in-flight write; returns a FenceState value. Retrying is safe.

        The common case is one statement: the guarded UPDATE also checks that the dedup
        ledger holds no result for the call (NOT EXISTS), in the same statement and under
        the same row lock. Only when it matches no row are the reasons read.
        """
        params = {
            "run_id": run_id,
            "key": idempotency_key,
            "call_id": call_id,
            "tool": tool,
            "token": token,
            "now": utcnow(),
        }
        # On PostgreSQL the common case is one round trip: the statement alone, autocommit.
        with self._ctx.one_statement() as s:
            if rowcount(s.execute(_STAMP, params)):
                return FenceState.STAMPED
        # It matched no row: the same guarded UPDATE again, and the reasons, in one
        # transaction (the row may have changed in between).
        recorded = select(ToolResultRow.idempotency_key).where(
            ToolResultRow.idempotency_key == idempotency_key
        )
        with self._ctx.sessions.begin() as s:
            if rowcount(s.execute(_STAMP, params)):
                return FenceState.STAMPED
            if s.scalar(recorded) is not None:
                return FenceState.ALREADY_DONE
            row = s.get(RunRow, run_id)
            if row is None or row.status != RunStatus.RUNNING.value:
                return FenceState.RUN_NOT_RUNNING
            if row.pending_token == token:
                return FenceState.STAMPED  # our own stamp, seen again on a retry
            if row.pending_call_id == call_id:
                # A fence for this very call from an earlier execution (a reset, a
                # duplicate): stamped-but-unclaimed may be replaced, anything else is refused.
                if row.pending_state == PendingState.STAMPED.value:
                    row.pending_token = token
                    row.updated_at = utcnow()
                    return FenceState.STAMPED
                return FenceState.INTERRUPTED
            return FenceState.BUSY

    def claim(self, *, run_id: str, token: str) -> bool:
        """stamped → executing for this token, on a RUNNING run. False: do not write."""
        with self._ctx.one_statement() as s:
            res = s.execute(_CLAIM, {"run_id": run_id, "token": token, "now": utcnow()})
            return bool(rowcount(res))

    def resolve(self, *, run_id: str, call_id: str, token: str, idempotency_key: str) -> str:
        """After a write activity failed: decide what really happened, from the database.

        - its step is recorded → ALREADY_DONE (only the report was lost);
        - still stamped → NEVER_CLAIMED: nothing ran; the fence is voided so the write may
          be scheduled again under a fresh token;
        - claimed → INTERRUPTED: the outcome is unknown; the fence stays as evidence.
        """
        with self._ctx.sessions.begin() as s:
            done = s.scalar(
                select(ToolResultRow.idempotency_key).where(
                    ToolResultRow.idempotency_key == idempotency_key
                )
            )
            if done is not None:
                return FenceState.ALREADY_DONE
            res = s.execute(
                update(RunRow)
                .where(
                    RunRow.id == run_id,
                    RunRow.pending_token == token,
                    RunRow.pending_state == PendingState.STAMPED.value,
                )
                .values(
                    pending_call_id=None,
                    pending_tool=None,
                    pending_token=None,
                    pending_state=None,
                    updated_at=utcnow(),
                )
            )
            if rowcount(res):
                return FenceState.NEVER_CLAIMED
            s.execute(
                update(RunRow)
                .where(
                    RunRow.id == run_id,
                    RunRow.pending_call_id == call_id,
                    RunRow.pending_state == PendingState.EXECUTING.value,
                )
                .values(pending_state=PendingState.OUTCOME_UNKNOWN.value, updated_at=utcnow())
            )
            row = s.get(RunRow, run_id)
            if row is not None and row.pending_call_id is None:
                # No fence and no record: the stamp itself never landed.
                return FenceState.NEVER_CLAIMED
            return FenceState.INTERRUPTED
