"""A run whose events commit out of sequence order, written through the store's own write
paths (a begin, a tool step, a settle's guarded move and event), as the worker writes
them: sequence 2 commits before sequence 1, as a parallel call or a reconciled write's
`tool` event does. Followers must see every event once, in commit order (migration 0018)."""

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.messages import ToolCall
from agentrt.store.db.context import StoreContext
from agentrt.store.runs.transitions import move
from agentrt.store.steps.events import event_row, insert_event
from agentrt.store.steps.tools import ToolStep, ToolStepStore
from tests._runs import begin_run
from tests._snapshots import recorded

SNAPSHOT = recorded("full")
# The order the steps commit in, and so the order a follower must see them in.
COMMITTED = [0, 2, 1, 3]


def begin(ctx: StoreContext, initiator: str, profile: str = "helper") -> str:
    """A RUNNING run with its `run_started` event (sequence 0, position 0)."""
    return begin_run(ctx, profile=profile, snapshot=SNAPSHOT, prompt="late events",
                     initiator=initiator)  # fmt: skip


def tool_step(ctx: StoreContext, run_id: str, sequence: int) -> None:
    """The `tool` step at `sequence` (its message, event and ledger row, as one)."""
    call = ToolCall(call_id=f"call-{sequence}", name="lookup_order", arguments={"n": sequence})
    ToolStepStore(ctx).record(ToolStep(run_id=run_id, sequence=sequence, round=1, call=call,
                                       effect="READ", content=f"result {sequence}",
                                       is_error=False, privacy="full",
                                       idempotency_key=f"{run_id}:{sequence}"))  # fmt: skip


def settle(ctx: StoreContext, run_id: str, sequence: int) -> None:
    """The run FAILED with its `run_failed` event, one transaction (a settle's shape)."""
    with ctx.sessions.begin() as s:
        moved = move(s, run_id, frm=RunStatus.RUNNING, to=RunStatus.FAILED, sequence=sequence)
        assert moved.applied
        payload = {"status": "FAILED", "reason": "error"}
        insert_event(s, event_row(ctx.sealer, run_id, sequence, EventKind.RUN_FAILED, 1,
                                  payload, "full"))  # fmt: skip
