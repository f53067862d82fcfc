"""A pending or interrupted write is shown with its arguments at the run's privacy level
only (issue 27 item 5): verbatim at full, redacted at redacted, and at metadata and none
only their size, in the store's run view (the Python API and the CLI read it) and in the
operator API's body. A run's fence and transcript are written here as the runtime writes
them, on the suite's real database."""

import uuid

import pytest
from sqlalchemy import update

from agentrt.api.operator.views import run_out
from agentrt.contracts.enums import PendingState, ToolEffect
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import Message, ToolCall
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests._snapshots import recorded

CANARY = "canary-7f3e9d"
SECRET = "sk-proj-" + "A" * 24
ARGS = {"order_id": CANARY, "memo": f"mail {CANARY}@example.com key {SECRET}", "amount": 5}


def _run_with_write(parts: WorkerResources, privacy: str, state: PendingState) -> str:
    runs, run_id, call_id = RunStore(parts.ctx), str(uuid.uuid4()), f"call-{CANARY}"
    plan = recorded(privacy, tools={"issue_refund": ToolEffect.NON_IDEMPOTENT_WRITE})
    begin_run(parts.ctx, run_id, snapshot=plan, prompt="refund", initiator="alice", privacy=privacy)
    turn = Message(role="assistant", tool_calls=[ToolCall(call_id=call_id, name="issue_refund",
                                                          arguments=ARGS)])  # fmt: skip
    with parts.ctx.sessions.begin() as s:
        runs.append_message(s, run_id, 1, turn)
        s.execute(
            update(RunRow)
            .where(RunRow.id == run_id)
            .values(pending_call_id=call_id, pending_tool="issue_refund",
                    pending_token="t", pending_state=state.value)
        )  # fmt: skip
    return run_id


@pytest.mark.parametrize("state", [PendingState.EXECUTING, PendingState.OUTCOME_UNKNOWN])
@pytest.mark.parametrize("privacy", ["metadata", "none"])
def test_arguments_below_redacted_are_never_shown(
    parts: WorkerResources, privacy: str, state: PendingState
) -> None:
    run_id = _run_with_write(parts, privacy, state)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.pending_effect is not None
    pe = view.pending_effect
    assert pe.arguments is None and pe.arguments_size == len(ARGS) and pe.privacy == privacy
    assert pe.state is state and pe.idempotency_key == idempotency_key(run_id, pe.call_id)
    body = run_out(view, privacy).model_dump_json()
    for shown in (view.model_dump_json(), body):
        assert "example.com" not in shown and SECRET not in shown
        assert shown.count(CANARY) == shown.count(f"call-{CANARY}")  # only inside the call id


def test_redacted_arguments_hide_secrets_and_addresses(parts: WorkerResources) -> None:
    run_id = _run_with_write(parts, "redacted", PendingState.OUTCOME_UNKNOWN)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.pending_effect is not None
    out = run_out(view, "redacted")
    assert out.pending_write is not None
    args = out.pending_write.arguments
    assert args is not None and args["amount"] == 5
    for shown in (view.model_dump_json(), out.model_dump_json()):
        assert SECRET not in shown and "@example.com" not in shown


def test_full_arguments_are_shown_as_the_model_gave_them(parts: WorkerResources) -> None:
    run_id = _run_with_write(parts, "full", PendingState.STAMPED)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None and view.pending_effect is not None
    assert view.pending_effect.arguments == ARGS
    assert view.pending_effect.effect == "NON_IDEMPOTENT_WRITE"


def test_a_body_shown_at_another_level_than_the_store_kept_withholds_the_arguments(
    parts: WorkerResources,
) -> None:
    run_id = _run_with_write(parts, "full", PendingState.OUTCOME_UNKNOWN)
    view = RunStore(parts.ctx).get(run_id)
    assert view is not None
    out = run_out(view, "metadata")
    assert out.pending_write is not None
    assert out.pending_write.arguments is None and out.pending_write.arguments_size == len(ARGS)
    assert "example.com" not in out.model_dump_json()
