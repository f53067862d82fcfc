"""What a decider reads a pending turn against: the user's prompt and the model's text before
the calls, taken from the run's own events, so at the level those were recorded at (the run's
privacy level: text at full or redacted, only sizes at metadata or none)."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_, select

from agentrt.contracts.enums import EventKind
from agentrt.store.context import StoreContext
from agentrt.store.rows import EventRow
from agentrt.store.runs import RunStore


@dataclass(frozen=True)
class PendingContext:
    started: dict[str, Any]  # the run_started event's payload
    turn: dict[str, Any]  # the payload of the llm event that asked for the calls

    def texts(self) -> dict[str, Any]:
        """`PendingOut`'s prompt, said and content_withheld."""
        prompt, said = self.started.get("prompt"), self.turn.get("content")
        withheld = bool(self.started.get("content_withheld") or self.turn.get("content_withheld"))
        return {
            "prompt": prompt if isinstance(prompt, str) else None,
            "said": said if isinstance(said, str) else None,
            "content_withheld": withheld,
        }


def pending_context(ctx: StoreContext, run_id: str, round: int) -> PendingContext:
    """The run's first event and the model turn of `round` (two rows by the primary key)."""
    q = (
        select(EventRow)
        .where(
            EventRow.run_id == run_id,
            or_(
                EventRow.sequence == 0,
                and_(EventRow.kind == EventKind.LLM.value, EventRow.round == round),
            ),
        )
        .order_by(EventRow.sequence)
    )
    with ctx.reads() as s:
        rows = s.scalars(q).all()
    runs = RunStore(ctx)
    started: dict[str, Any] = {}
    turn: dict[str, Any] = {}
    for r in rows:
        payload = runs.open_payload(r.run_id, r.sequence, r.payload)
        if r.kind == EventKind.RUN_STARTED.value:
            started = payload
        elif r.kind == EventKind.LLM.value:
            turn = payload  # the last of the round: the turn that asked
    return PendingContext(started, turn)
