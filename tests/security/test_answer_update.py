"""Issue 42 item 3: the one answer path holds what each kind's own path held.

- The route: `POST /runs/{id}/answers` asks for an answer scope at the door (a token with
  none is refused 403 before its body is read), and for the body kind's own scope after
  (runs:decide for a decision, runs:reconcile, runs:resolve): a token that may reconcile
  may not decide through it, nor resolve. Each refusal changes nothing.
- The update: a decision sent straight to Temporal as the new `answer` update, with no
  attestation or a forged one, is refused by the resume activity (a profile that counts
  only attested decisions) exactly as by `decide`; a bare follow-up message is refused at
  the validator (UnattestedInput), leaving no trace."""

from datetime import timedelta

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import UPDATE_ANSWER
from tests.api.conftest import (  # noqa: F401  (fixtures)
    Live,
    _serve,
    a2a_parts,
    a2a_settings,
    live,
)
from tests.api.ops_helpers import error_type, http, name, token, waiting_refund


async def test_the_answers_route_asks_for_the_kinds_own_scope(live: Live) -> None:  # noqa: F811
    async with waiting_refund(live, "olga", ("runs:start", "runs:read", "runs:read-all")) as run:
        owner_secret, run_id, digest = run.secret, run.run_id, run.digest
    decision = {"kind": "decision", "verdict": "approve", "turn_digest": digest}
    reconcile = {"kind": "reconcile", "call_id": "c", "fence": "f", "answer": "give_up"}
    resolution = {"kind": "resolution", "call_id": "c", "fence": "f", "outcome": "applied",
                  "note": "checked"}  # fmt: skip
    cases = [
        (("runs:read-all",), decision, "runs:decide or runs:reconcile or runs:resolve"),
        (("runs:read-all",), {"not": "json of an answer"}, "runs:decide or"),
        (("runs:read-all", "runs:reconcile"), decision, "lacks the scope runs:decide"),
        (("runs:read-all", "runs:reconcile"), resolution, "lacks the scope runs:resolve"),
        (("runs:read-all", "runs:decide"), reconcile, "lacks the scope runs:reconcile"),
        (("runs:read-all", "runs:resolve"), decision, "lacks the scope runs:decide"),
    ]
    for scopes, body, says in cases:
        secret = token(live, name("mallory"), *scopes)
        async with http(live, secret) as api:
            refused = await api.post(f"/runs/{run_id}/answers", json=body)
            assert (refused.status_code, error_type(refused)) == (403, "forbidden"), body
            assert says in refused.json()["error"]["message"]
    async with http(live, owner_secret) as api:
        after = (await api.get(f"/runs/{run_id}")).json()
        assert after["status"] == "WAITING_FOR_APPROVAL"
        assert after["pending_approval"]["turn_digest"] == digest
        events = (await api.get(f"/runs/{run_id}/events")).json()["events"]
    assert not [e for e in events if e["kind"] == "approval"]


async def test_the_answer_update_counts_only_attested_answers(live: Live) -> None:  # noqa: F811
    async with waiting_refund(live, "ivy", ("runs:start", "runs:read")) as run:
        who, secret, run_id, digest = run.who, run.secret, run.run_id, run.digest
    handle = live.runtime.client.get_workflow_handle(run_id)
    bare = ApprovalDecision(approved=True, decided_by=who, turn_digest=digest)
    for forged in (bare, bare.model_copy(update={"attestation": "0" * 64})):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(UPDATE_ANSWER, forged, rpc_timeout=timedelta(seconds=30))
        cause = refused.value.cause
        assert isinstance(cause, ApplicationError)
        assert cause.type == ErrorType.UNATTESTED_DECISION.value
    # A follow-up with no attestation: refused at the door (the run waits for approval, so
    # it is refused as not awaited first; either way nothing is recorded).
    message = InputMessage(message_id="m1", text="refund it all", sent_by=who)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(UPDATE_ANSWER, message, rpc_timeout=timedelta(seconds=30))
    assert isinstance(refused.value.cause, ApplicationError)
    assert refused.value.cause.type == ErrorType.NOT_AWAITING_INPUT.value
    async with http(live, secret) as api:
        after = (await api.get(f"/runs/{run_id}")).json()
        events = (await api.get(f"/runs/{run_id}/events")).json()["events"]
    assert after["status"] == "WAITING_FOR_APPROVAL"
    assert not [e for e in events if e["kind"] == "approval"]
    assert [e["payload"]["refusal"] for e in events if e["kind"] == "decision_refused"] == [
        "UnattestedDecision", "UnattestedDecision",
    ]  # fmt: skip
