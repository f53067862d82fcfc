"""What a decider reads a pending turn against: the user's prompt and the model's text before
the calls, taken from the run's own events, so at the level those were recorded at (the run's
privacy level: text at full or redacted, only sizes at metadata or none)."""

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, or_, select

from agentrt.contracts.enums import EventKind
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import EventRow
from agentrt.store.runs.record import RunStore


@dataclass(frozen=True)
class PendingContext:
    started: dict[str, Any]  # the run_started event's payload
    turn: dict[str, Any]  # the payload of the llm event that asked for the calls
    # The approval policy's ask on the pending turn (its policy_decision event), and who
    # approved it so far where the policy asks for several people.
    policy: dict[str, Any] = field(default_factory=dict)
    approved_by: list[str] = field(default_factory=list)

    def texts(self) -> dict[str, Any]:
        """`PendingOut`'s prompt, said and content_withheld; the policy's ask, if any."""
        prompt, said = self.started.get("prompt"), self.turn.get("content")
        withheld = bool(self.started.get("content_withheld") or self.turn.get("content_withheld"))
        asked = self.policy.get("approvers")
        return {
            "prompt": prompt if isinstance(prompt, str) else None,
            "said": said if isinstance(said, str) else None,
            "content_withheld": withheld,
            "policy": self.policy.get("decided_by"),
            "approvals_needed": asked if isinstance(asked, int) else 1,
            "approved_by": list(self.approved_by),
        }


def pending_contexts(ctx: StoreContext, rounds: dict[str, int]) -> dict[str, PendingContext]:
    """For each run id, its first event and the model turn of its pending round: one query
    for a whole inbox, each run's two rows by the primary key."""
    if not rounds:
        return {}
    llm = EventKind.LLM.value
    kinds = [llm, EventKind.POLICY_DECISION.value, EventKind.APPROVAL.value]
    wanted = [
        and_(
            EventRow.run_id == run_id,
            or_(EventRow.sequence == 0, and_(EventRow.kind.in_(kinds), EventRow.round == rnd)),
        )
        for run_id, rnd in rounds.items()
    ]
    q = select(EventRow).where(or_(*wanted)).order_by(EventRow.run_id, EventRow.sequence)
    with ctx.reads() as s:
        rows = s.scalars(q).all()
    runs = RunStore(ctx)
    started: dict[str, dict[str, Any]] = {}
    turns: dict[str, dict[str, Any]] = {}
    policies: dict[str, dict[str, Any]] = {}
    approved: dict[str, list[str]] = {}
    for r in rows:
        payload = runs.open_payload(r.run_id, r.sequence, r.payload)
        if r.kind == EventKind.RUN_STARTED.value:
            started[r.run_id] = payload
        elif r.kind == llm:
            turns[r.run_id] = payload  # the last of the round: the turn that asked
        elif r.kind == EventKind.POLICY_DECISION.value:
            policies[r.run_id] = payload
        elif payload.get("partial"):  # an approval on record while the turn still waits
            approved.setdefault(r.run_id, []).append(str(payload.get("decided_by")))
    return {
        run_id: PendingContext(
            started.get(run_id, {}),
            turns.get(run_id, {}),
            policies.get(run_id, {}),
            approved.get(run_id, []),
        )
        for run_id in rounds
    }
