"""The live output table (agent_live): a model call's deltas while it writes them, read by
subscribers in other processes. Not the run's record: rows go when the turn is stored
(`prune`), and a lost row only costs a subscriber text it sees committed moments later.

A commit here wakes the run's followers: in this process through the bell, in others on
SQLite through the wake sockets (store/live/wake.py), on PostgreSQL through the table's
NOTIFY (migration 0013). Nothing but the wake goes that way: followers read the table."""

import contextlib
import functools
from dataclasses import dataclass

from sqlalchemy import delete, func, select

from agentrt.contracts.live import LiveDelta
from agentrt.store.db.context import StoreContext, insert_ignoring, utcnow
from agentrt.store.db.tables import EventRow, LiveRow, RunRow
from agentrt.store.live.bell import LIVE_BELL, LIVE_WAKES
from agentrt.store.live.wake import Ringer, wake_dir
from agentrt.store.security.sealed import LIVE_TEXT, within


@dataclass(frozen=True)
class Piece:
    """What a publisher writes: one delta, or the retract mark of an earlier attempt."""

    sequence: int
    attempt: int
    kind: str
    offset: int = 0
    text: str = ""


def _row_id(run_id: str, p: Piece | LiveRow) -> str:
    return within(run_id, f"{p.sequence}.{p.attempt}.{p.offset}")


class LiveStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self.wake_dir = wake_dir(ctx.sqlite_file)

    @functools.cached_property
    def _ringer(self) -> Ringer | None:
        return Ringer(self.wake_dir) if self.wake_dir is not None else None

    def following(self) -> contextlib.AbstractContextManager[bool]:
        """For the block, this process hears other processes' publishes to this database
        (SQLite) on the bell; yields whether it does (False: its followers poll)."""
        return LIVE_WAKES.following(self.wake_dir)

    def _ring(self, run_id: str) -> None:
        """Committed: the run's followers, here and in other processes, read it now."""
        LIVE_BELL.ring(run_id)
        if self._ringer is not None:
            self._ringer.ring(run_id)

    def publish(self, run_id: str, pieces: list[Piece]) -> None:
        """Write `pieces`, in order, in one transaction; a piece written already (the same
        attempt, offset and kind) is kept as it was."""
        if not pieces:
            return
        now, sealer = utcnow(), self._ctx.sealer
        rows = [
            {
                "run_id": run_id,
                "sequence": p.sequence,
                "attempt": p.attempt,
                "offset": p.offset,
                "kind": p.kind,
                "text": LIVE_TEXT.seal(sealer, p.text, _row_id(run_id, p)),
                "created_at": now,
            }
            for p in pieces
        ]
        key = ["run_id", "sequence", "attempt", "offset", "kind"]
        # One piece (a call's first delta always is: it is written at once) is one
        # statement, atomic on its own: on PostgreSQL in autocommit, without the BEGIN and
        # COMMIT round trips, on the first token's path.
        scope = self._ctx.one_statement if len(rows) == 1 else self._ctx.transaction
        with scope() as c:
            stmt = insert_ignoring(c, LiveRow.__table__, key)
            for row in rows:  # one by one: `id` must follow the order of the pieces
                c.execute(stmt, row)
        self._ring(run_id)

    def read(self, run_id: str, after: int = 0, limit: int = 500) -> list[LiveDelta]:
        """The run's pieces after id `after`, in order."""
        q = (
            select(LiveRow)
            .where(LiveRow.run_id == run_id, LiveRow.id > after)
            .order_by(LiveRow.id)
            .limit(limit)
        )
        with self._ctx.reads() as s:
            rows = list(s.scalars(q))
        sealer = self._ctx.sealer
        return [
            LiveDelta(
                id=r.id,
                sequence=r.sequence,
                attempt=r.attempt,
                kind="retract" if r.kind == "retract" else "delta",
                offset=r.offset,
                text=LIVE_TEXT.open(sealer, r.text, _row_id(run_id, r)),
            )
            for r in rows
        ]

    def mark(self, run_id: str) -> tuple[int | None, int | None, str | None]:
        """What changes whenever a follower of the run has something new to read: its last
        event's position (not its highest sequence: an event committed late has a lower
        one), its last live piece and its status, in one statement (api/wake.py polls it
        for all of a run's followers where no NOTIFY wakes them)."""
        q = select(
            select(func.max(EventRow.position)).where(EventRow.run_id == run_id).scalar_subquery(),
            select(func.max(LiveRow.id)).where(LiveRow.run_id == run_id).scalar_subquery(),
            select(RunRow.status).where(RunRow.id == run_id).scalar_subquery(),
        )
        with self._ctx.read_rows() as c:
            row = c.execute(q).one()
        return row[0], row[1], row[2]

    def prune(self, run_id: str, upto: int) -> None:
        """Drop the pieces of turns up to `upto`: stored now, they are in the event log."""
        with self._ctx.one_statement() as c:  # one DELETE: atomic on its own
            c.execute(delete(LiveRow).where(LiveRow.run_id == run_id, LiveRow.sequence <= upto))
        # Called once the turn is stored: its followers find its event at once, not at the
        # next poll (an operator API follower on SQLite: 0.2 s).
        self._ring(run_id)
