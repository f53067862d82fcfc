"""A profile's past approval-bound turns, as an approval policy's dry run replays them
(`agentrt policies dry-run`): each turn's calls (as the run's privacy level kept them), who
started the run, what it had spent when it asked, and the decision on record."""

from dataclasses import dataclass

from sqlalchemy import select

from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import ToolCall, Usage
from agentrt.contracts.views import EventView
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore


@dataclass(frozen=True)
class PastTurn:
    run_id: str
    round: int
    initiator: str
    calls: list[ToolCall] | None  # None: the privacy level kept no arguments
    spend: Usage
    decided: str  # "approved by bob", "denied by policy refunds@3", "undecided"


def _spend(events: list[EventView], before: int) -> Usage:
    """The run's model spend before the model turn at `before` (its llm events' tokens and
    cost): what the run had spent when its turn was judged, as the workflow passes it."""
    total = Usage.none()
    for e in events:
        if e.kind is EventKind.LLM and e.position < before:
            cost = e.payload.get("cost_usd")
            total = total + Usage(
                prompt_tokens=int(e.payload.get("prompt_tokens", 0)),
                completion_tokens=int(e.payload.get("completion_tokens", 0)),
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
            )
    return total


def _decided(events: list[EventView], after: int) -> str:
    for e in events:
        if e.kind is EventKind.APPROVAL and e.position > after and not e.payload.get("partial"):
            verdict = "approved" if e.payload.get("approved") else "denied"
            return f"{verdict} by {e.payload.get('decided_by')}"
    return "undecided"


def _calls(payload: dict[str, object]) -> list[ToolCall] | None:
    kept = payload.get("tool_calls")
    if not isinstance(kept, list):
        return None
    try:
        return [ToolCall.model_validate(c) for c in kept]
    except ValueError:  # arguments withheld by the privacy level
        return None


_GATED = (EventKind.APPROVAL_REQUESTED, EventKind.POLICY_DECISION, EventKind.APPROVAL)


def _turns(runs: RunStore, run_id: str, initiator: str) -> list[PastTurn]:
    """The run's approval-bound turns: each round a decision was asked for or made in (by
    a person or a policy), its approval-bound calls as its model turn asked for them."""
    events = runs.events(run_id, -1)
    plan = runs.snapshot(run_id).plan
    gated = {e.round: e for e in events if e.kind in _GATED}  # the round's last such event
    turns = []
    for e in events:
        if e.kind is not EventKind.LLM or e.round not in gated:
            continue
        calls = _calls(e.payload)
        if calls is not None and plan is not None:
            bound = {t.name for t in plan.tools if t.requires_approval}
            calls = [c for c in calls if c.name in bound]
        spend, decided = _spend(events, e.position), _decided(events, e.position)
        turns.append(PastTurn(run_id, e.round, initiator, calls, spend, decided))
    return turns


def past_turns(ctx: StoreContext, profile: str, limit: int) -> list[PastTurn]:
    """The approval-bound turns of the profile's latest `limit` runs, newest run first."""
    with ctx.sessions.begin() as s:
        rows = s.execute(
            select(RunRow.id, RunRow.initiator)
            .where(RunRow.profile == profile)
            .order_by(RunRow.created_at.desc())
            .limit(limit)
        ).all()
    runs = RunStore(ctx)
    return [t for run_id, initiator in rows for t in _turns(runs, run_id, initiator)]
