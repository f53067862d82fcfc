"""A read's step that rides with the run's next store write (issue 45): its rows, built and
sealed as the store stores them, carried by the workflow from the tool activity to the next
model call (or to the step that records them alone, when the next thing is no model call).

Only sealed values travel: the message body and the event payload are sealed with the
store's key to their row (the event's payload filtered to the run's privacy level first), so
Temporal's history holds of a read exactly what its database row holds, never more."""

from datetime import datetime

from pydantic import BaseModel


class DeferredStep(BaseModel):
    """A READ_ONLY call's step at its sequence: its `tool` message row (`role`, sealed
    `body`) and its `tool` event row (`kind`, `round`, `duration_ms`, sealed `payload`,
    `created_at`: when the call returned, not when the rows were written)."""

    sequence: int
    role: str
    body: str
    kind: str
    round: int
    duration_ms: float | None = None
    payload: str
    created_at: datetime


class RecordDeferredRequest(BaseModel):
    """The reads' steps to record alone: the run leaves its loop (a stop, a cancel, a
    continue-as-new) before a model call would have carried them. No privacy level: the
    rows were filtered and sealed at the run's when they were built."""

    run_id: str
    steps: list[DeferredStep]
