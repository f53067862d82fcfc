"""What the run views show of a write the run's fence holds, and of a pending turn's calls.

The fence (activities/fence/_sql.py) keeps the call id, the tool and its state on the run
row; the arguments are the model's own, in the transcript (sealed); the idempotency key is
derived from the run and the call (contracts/ids.py), as the tool was given it. Arguments
are filtered at the run's privacy level here, once, so every view (the Python API, the CLI,
the operator API, the page) shows the same.

`since` is the run row's last change: the stamp, the claim and the resolve each write it, and
nothing else writes the row while a write is in flight. Once a run has settled with its
write's outcome unknown it is the settle's time, which follows the resolve within moments.
"""

from typing import Any

from sqlalchemy import select

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import PendingState
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import Message
from agentrt.contracts.reconcile_answer import fence_id
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.contracts.views import PendingEffectView
from agentrt.store.db.context import StoreContext, as_utc
from agentrt.store.db.tables import MessageRow, RunRow
from agentrt.store.security.sealed import MESSAGE_BODY, within
from agentrt.store.steps.privacy import filter_payload

# How far back the transcript is searched for the call: it is in the last model turn, so
# a handful of rows; the bound only stops a corrupt row from making a read unbounded.
_SEARCHED_TURNS = 20


def pending_write(ctx: StoreContext, row: RunRow, snapshot: RunSnapshot) -> PendingEffectView:
    """The run's fenced write (the row's pending_call_id and pending_state are set)."""
    assert row.pending_call_id is not None and row.pending_state is not None
    call_id, tool = row.pending_call_id, row.pending_tool or ""
    level = snapshot.privacy
    arguments = _arguments(ctx, row.id, call_id)
    kept = filter_payload({"arguments": arguments}, level) if arguments is not None else {}
    return PendingEffectView(
        call_id=call_id,
        tool=tool,
        state=PendingState(row.pending_state),
        idempotency_key=idempotency_key(row.id, call_id),
        effect=snapshot.plan.effect_of(tool) if snapshot.plan else None,
        since=as_utc(row.updated_at),
        privacy=level,
        arguments=kept.get("arguments"),
        arguments_size=kept.get("arguments_size"),
        fence=fence_id(row.pending_token) if row.pending_token else None,
    )


def call_effects(snapshot: RunSnapshot, pending: PendingApproval | None) -> dict[str, str]:
    """Each pending call's effect class by call id, as the run's plan recorded it (a plan
    recorded before tools were kept in the snapshot shows none)."""
    if pending is None or snapshot.plan is None:
        return {}
    effects = {c.call_id: snapshot.plan.effect_of(c.name) for c in pending.calls}
    return {k: v for k, v in effects.items() if v is not None}


def _arguments(ctx: StoreContext, run_id: str, call_id: str) -> dict[str, Any] | None:
    """The call's arguments as the model gave them, from the latest assistant turns."""
    q = (
        select(MessageRow.sequence, MessageRow.body)
        .where(MessageRow.run_id == run_id, MessageRow.role == "assistant")
        .order_by(MessageRow.sequence.desc())
        .limit(_SEARCHED_TURNS)
    )
    with ctx.read_rows() as c:
        rows = c.execute(q).all()
    for sequence, body in rows:
        raw = MESSAGE_BODY.open(ctx.sealer, body, within(run_id, sequence))
        for call in Message.model_validate_json(raw).tool_calls:
            if call.call_id == call_id:
                return call.arguments
    return None
