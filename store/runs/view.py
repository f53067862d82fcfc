"""A run row as the clients read it (`RunView`): its answer and output unsealed, and the
write in flight or the turn waiting for approval, if any, with their effects."""

import json

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.contracts.views import RunView
from agentrt.store.db.context import StoreContext, as_utc
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.pending import call_effects, pending_write
from agentrt.store.security.sealed import RUN_ANSWER, RUN_OUTPUT, RUN_PENDING_APPROVAL

# The columns a view shows as the row holds them, under the same names.
_AS_STORED = (
    "iterations",
    "truncated",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "revision",
    "initiator",
    "error_type",
    "parent_run_id",
)


def run_view(ctx: StoreContext, row: RunRow) -> RunView:
    """The run a row holds, unsealed, with the write or the turn it waits on, if any."""
    answer = None
    if row.answer is not None:
        answer = RUN_ANSWER.open(ctx.sealer, row.answer, row.id)
    output = None
    if row.output is not None:
        output = json.loads(RUN_OUTPUT.open(ctx.sealer, row.output, row.id))
    busy = bool(row.pending_call_id or row.pending_approval)  # idle rows skip the parse
    snapshot = RunSnapshot.parse(row.snapshot) if busy else RunSnapshot()
    pending = None
    if row.pending_call_id and row.pending_state:
        pending = pending_write(ctx, row, snapshot)
    approval = None
    if row.pending_approval:
        approval = PendingApproval.model_validate_json(
            RUN_PENDING_APPROVAL.open(ctx.sealer, row.pending_approval, row.id)
        )
    created = as_utc(row.created_at)
    assert created is not None
    return RunView(
        run_id=row.id,
        profile=row.profile,
        status=RunStatus(row.status),
        outcome=Outcome(row.outcome) if row.outcome else None,
        termination_reason=(
            TerminationReason(row.termination_reason) if row.termination_reason else None
        ),
        answer=answer,
        output=output,
        created_at=created,
        finished_at=as_utc(row.finished_at),
        pending_effect=pending,
        pending_approval=approval,
        call_effects=call_effects(snapshot, approval),
        **{column: getattr(row, column) for column in _AS_STORED},
    )
